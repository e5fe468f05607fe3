// The addresses in forwarding headers, shared by the Request (its clientIp) and the profiler's access check.
import { isIP } from 'node:net';

/** A forwarded hop without its port or brackets (`1.2.3.4:80`, `[::1]:80`, `[::1]`); the hop itself otherwise. */
export function hopAddress(hop: string): string {
  if (hop.startsWith('[')) {
    const end = hop.indexOf(']');
    // Only a port may follow the brackets: `[::1]junk` and `[::1]:junk` are no address, as `1.2.3.4junk` is none.
    return end !== -1 && (end === hop.length - 1 || (hop.charCodeAt(end + 1) === 58 /* : */ && PORT.test(hop.slice(end + 2)))) ? hop.slice(1, end) : hop;
  }
  const colon = hop.indexOf(':');
  if (colon !== -1 && colon === hop.lastIndexOf(':') && isIP(hop.slice(0, colon)) === 4 && PORT.test(hop.slice(colon + 1))) return hop.slice(0, colon);
  return hop;
}

/** What may follow a hop's address and colon: a port, or RFC 7239's obfuscated one (`_` and letters, digits, `.`, `_`, `-`). */
const PORT = /^(?:\d{1,5}|_[A-Za-z0-9._-]+)$/;

/** An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as the IPv4 address it is; any other as it is. */
export function stripMapped(address: string): string {
  if (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4) return address.slice(7);
  // Other spellings (hex, upper case, zeros written out) are rare: the URL parser, which writes an
  // IPv6 address one way, is only asked about an address that has an `ffff` group and no zone.
  if (!MAYBE_MAPPED.test(address) || address.includes('%') || isIP(address) !== 6) return address;
  const mapped = CANONICAL_MAPPED.exec(new URL(`http://[${address}]/`).hostname);
  if (mapped === null) return address;
  const high = Number.parseInt(mapped[1]!, 16);
  const low = Number.parseInt(mapped[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

const MAYBE_MAPPED = /(?:^|:)0*ffff:/i;
/** A mapped address as WHATWG's URL writes it: the five zero groups always the longest run, so `::`. */
const CANONICAL_MAPPED = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/;
