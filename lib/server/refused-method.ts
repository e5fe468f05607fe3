// A refusal of a HEAD request has no content (RFC 9110 9.3.2). When node's parser fails in a
// request's head, no IncomingMessage says which method it had: it is read again from the bytes the
// parser was reading, and only where those show for sure where the refused request begins.

const LF = 0x0a;
const CR = 0x0d;
/** `HEAD ` as node's parser takes it: upper case, then the space before the target. */
const HEAD_SP = [0x48, 0x45, 0x41, 0x44, 0x20];

/**
 * Whether the request whose head node's parser refused is a HEAD, from the error's `rawPacket` (the
 * chunk it was parsing) and `bytesParsed` (where in it it stopped). That request begins after the
 * last empty line before that point, which ends the message before it (a head without a body, or a
 * chunked body; the caller rules out one whose body Content-Length sizes, which may end anywhere),
 * or at the chunk's start when `opening` (nothing came on the connection before the chunk).
 * false whenever that beginning is not in the chunk, as in a head a client sent in several writes.
 */
export function refusesHeadRequest(packet: Uint8Array | undefined, parsed: number | undefined, opening: boolean): boolean {
  if (packet === undefined || typeof parsed !== 'number' || !(parsed >= 0 && parsed <= packet.length)) return false;
  let start = parsed;
  while (start > 0 && !endsEmptyLine(packet, start - 1)) start--;
  if (start === 0 && !opening) return false;
  // Empty lines a client may send before a request line (RFC 9112 2.2), which node skips.
  while (start < parsed && (packet[start] === CR || packet[start] === LF)) start++;
  // The parser went past the method and its space: a stop inside them is no HEAD.
  return parsed - start >= HEAD_SP.length && HEAD_SP.every((byte, i) => packet[start + i] === byte);
}

/** Whether the LF at `at` ends an empty line that lies whole in the packet. */
function endsEmptyLine(packet: Uint8Array, at: number): boolean {
  return packet[at] === LF && (packet[at - 1] === LF || (packet[at - 1] === CR && packet[at - 2] === LF));
}
