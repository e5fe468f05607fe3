// The addresses in forwarding headers, shared by the Request (its clientIp) and the profiler's access check.
import { isIP } from 'node:net';

/** A forwarded hop without its port or brackets (`1.2.3.4:80`, `[::1]:80`, `[::1]`); the hop itself otherwise. */
export function hopAddress(hop: string): string {
  if (hop.startsWith('[')) {
    const end = hop.indexOf(']');
    // Only a port may follow the brackets: `[::1]junk` is no address, as `1.2.3.4junk` is none.
    return end !== -1 && (end === hop.length - 1 || hop.charCodeAt(end + 1) === 58) /* : */ ? hop.slice(1, end) : hop;
  }
  const colon = hop.indexOf(':');
  if (colon !== -1 && colon === hop.lastIndexOf(':') && isIP(hop.slice(0, colon)) === 4) return hop.slice(0, colon);
  return hop;
}

/** An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) as the IPv4 address it is; any other as it is. */
export function stripMapped(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
