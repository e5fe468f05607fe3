// node's parser counts the request target with the header field names and values against one
// limit (maxHeaderSize) and reports an overrun as HPE_HEADER_OVERFLOW either way. The status
// differs (RFC 9110: 414 URI Too Long for the target, 431 for the fields), so the bytes the
// parser was reading when it stopped are read again here to tell which one it was.

/** Which part of a request head overran the head limit; `unknown` when the bytes at hand cannot tell. */
export type HeadOverflow = 'request-target' | 'header-fields' | 'unknown';

const LF = 0x0a;
const HTAB = 0x09;
const SP = 0x20;

/**
 * Which part of the head made node's parser stop with HPE_HEADER_OVERFLOW, from the error's
 * `rawPacket` (the chunk it was parsing) and `bytesParsed` (where in it it stopped: at the space
 * ending the target, at the colon or CR ending a field name or value, or at the chunk's end when
 * the span runs on). Exact whenever the line it stopped in starts in the chunk (a request line is
 * `METHOD SP target`, a field line `name:`) or ends there; `unknown` for a chunk that is all the
 * middle of one spaceless line, as a long line's later TLS records are.
 */
export function headOverflow(packet: Uint8Array | undefined, parsed: number | undefined, maxHeaderSize: number): HeadOverflow {
  if (packet === undefined || typeof parsed !== 'number' || !(parsed >= 0 && parsed <= packet.length)) return 'unknown';
  let lineStart = parsed;
  while (lineStart > 0 && packet[lineStart - 1] !== LF) lineStart--;

  const methodEnd = requestLineMethodEnd(packet, lineStart, parsed);
  // The target is all node counts on a request line: only one that alone reaches the limit overran it
  // here. A line that looks like one but falls short is a field value's middle (`Bearer abc...`).
  if (methodEnd !== -1) return parsed - lineStart >= maxHeaderSize && !hasWhitespace(packet, methodEnd + 1, parsed) ? 'request-target' : 'header-fields';
  // A line that starts in the chunk and is no request line is a field line.
  if (lineStart > 0) return 'header-fields';
  // The chunk starts inside a line begun in an earlier one: only a field value holds spaces, only the target ends at a space.
  if (hasWhitespace(packet, 0, parsed)) return 'header-fields';
  if (parsed < packet.length) return packet[parsed] === SP ? 'request-target' : 'header-fields';
  return 'unknown';
}

/** The index of the space after a method at `start` (node's parser takes upper-case method names only), or -1. */
function requestLineMethodEnd(packet: Uint8Array, start: number, end: number): number {
  let at = start;
  while (at < end && ((packet[at]! >= 0x41 && packet[at]! <= 0x5a) || packet[at] === 0x2d /* - */)) at++;
  return at > start && at < end && packet[at] === SP ? at : -1;
}

function hasWhitespace(packet: Uint8Array, start: number, end: number): boolean {
  for (let at = start; at < end; at++) if (packet[at] === SP || packet[at] === HTAB) return true;
  return false;
}
