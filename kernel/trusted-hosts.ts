import { isIP } from 'node:net';
import { describeValue } from './describe-value.js';
import { isValidHost } from './host-syntax.js';
import type { TrustHost } from './request.js';

/**
 * One entry of a trusted-hosts list (Symfony's `framework.trusted_hosts`), matched against the
 * request's host without its port, case-insensitively:
 * - `example.com`: that host only;
 * - `.example.com`: example.com and every subdomain, at any depth;
 * - `*.example.com`: every subdomain of example.com, at any depth, but not example.com itself;
 * - `127.0.0.1`, `::1` or `[::1]`: that IP address (IPv6 in any spelling: `[0:0::1]` is `[::1]`);
 * - a RegExp: the whole host must match it (it is tested as `^(?:pattern)$`, case-insensitively),
 *   so `/example\.com/` trusts example.com, never evil-example.com.
 */
export type TrustedHost = string | RegExp;

/**
 * Compiles a trusted-hosts list into the check a Request makes on its host. An entry that
 * could never match, or would trust more than it seems to, is refused here: a TypeError for
 * what is no string or RegExp, a RangeError naming the entry otherwise.
 */
export function compileTrustedHosts(entries: readonly TrustedHost[]): TrustHost {
  if (!Array.isArray(entries)) {
    throw new TypeError(`trustedHosts must be an array of host names and RegExps, not ${typeof entries === 'string' ? `a string (write ["${entries}"])` : describeValue(entries)}.`);
  }
  if (entries.length === 0) throw new RangeError('trustedHosts is empty, which would refuse every request: leave it out to accept every host.');
  const exact = new Set<string>();
  const suffixes: string[] = [];
  const patterns: RegExp[] = [];
  for (const entry of entries as readonly unknown[]) {
    if (entry instanceof RegExp) patterns.push(wholeHost(entry));
    else if (typeof entry === 'string') addHost(entry, exact, suffixes);
    else throw new TypeError(`Invalid trusted host ${describeValue(entry)}: give a host name (string) or a RegExp.`);
  }
  return (host) => {
    if (exact.has(host)) return true;
    for (const suffix of suffixes) if (host.endsWith(suffix)) return true;
    for (const pattern of patterns) if (pattern.test(host)) return true;
    // An IPv6 address has many spellings ([::1], [0:0::1]); the entries hold the canonical one.
    return host.charCodeAt(0) === 91 /* [ */ && exact.has(canonicalIpv6(host) ?? host);
  };
}

/** Files a string entry under the exact hosts or the domain suffixes, or refuses it. */
function addHost(entry: string, exact: Set<string>, suffixes: string[]): void {
  const refuse = (why: string): never => {
    throw new RangeError(`Invalid trusted host "${entry}": ${why}.`);
  };
  const text = entry.toLowerCase();
  if (text === '') refuse('an empty host matches no request');
  if (text === '*') refuse('"*" would trust every host; leave trustedHosts out to accept every host');
  if (text.startsWith('/')) refuse('a string is a host name, never a pattern; give a RegExp object (/^api\\d+\\.example\\.com$/) for patterns');
  if (text.includes('://')) refuse('give the host alone, not a URL');
  const domain = text.startsWith('*.') ? text.slice(2) : text.startsWith('.') ? text.slice(1) : null;
  const name = domain ?? text;
  const ipv6 = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  if (isIP(ipv6) === 6 || isIP(name) === 4) {
    if (domain !== null) refuse('an IP address has no subdomains');
    exact.add(isIP(name) === 4 ? name : (canonicalIpv6(`[${ipv6}]`) ?? refuse('not an IPv6 address a Host header can hold')));
    return;
  }
  if (name.includes('*')) refuse('"*" is allowed only as the first label ("*.example.com"); give a RegExp for other patterns');
  // Only what is a host once its port is gone is told to drop the port: `[::1` would be told to give `[:`.
  const withoutPort = name.replace(/:\d*$/, '');
  if (withoutPort !== name && isValidHost(withoutPort)) refuse(`hosts are matched without their port; give "${entry.replace(/:\d*$/, '')}"`);
  // A bracketed name isValidHost takes is an IPv6 address, which the branch above has filed.
  if (!isValidHost(name)) refuse('not a host name, an IP address, ".example.com" or "*.example.com"');
  if (domain === null) {
    exact.add(name);
    return;
  }
  if (text.startsWith('.')) exact.add(name);
  suffixes.push(`.${name}`);
}

/** The RegExp that tests `pattern` against the whole host, case-insensitively; never stateful (no g or y). */
function wholeHost(pattern: RegExp): RegExp {
  const flags = pattern.flags.replace(/[^suv]/g, '');
  return new RegExp(`^(?:${pattern.source})$`, `${flags}i`);
}

/** `[::1]` for `[0:0::1]` (the URL standard's serialization); undefined for what is no IPv6 literal. */
function canonicalIpv6(bracketed: string): string | undefined {
  try {
    return new URL(`http://${bracketed}/`).hostname;
  } catch {
    return undefined;
  }
}

