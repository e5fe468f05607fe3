// What a host may look like, shared by the Request (Host headers) and the trusted-hosts list (its entries).
import { isIP } from 'node:net';

const HOST_PATTERN = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?\.?)$/i;

/**
 * Whether `host` (without its port) is a valid host: a name of letters, digits, `_`, `-` and dots,
 * with no empty label (`a..example.com`, as Symfony refuses it), or a bracketed IPv6 address.
 */
export function isValidHost(host: string): boolean {
  // The pattern lets any hex, colons and dots through the brackets: [1.2.3.4] or [::::] is no IPv6 address.
  if (host.charCodeAt(0) === 91 /* [ */) return HOST_PATTERN.test(host) && isIP(host.slice(1, -1)) === 6;
  return HOST_PATTERN.test(host) && host.indexOf('..') === -1;
}
