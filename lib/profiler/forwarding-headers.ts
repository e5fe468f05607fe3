import type { IncomingHttpHeaders } from 'node:http';
import { hopAddress, stripMapped } from '../../kernel/forwarded-hop.js';

/** Headers by which a proxy names the client it passes a request on for: comma-separated lists, as node:http joins repeated ones. */
const CLIENT_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'x-client-ip', 'cf-connecting-ip', 'true-client-ip'] as const;
/** Headers by which a proxy says it passed a request on (or for which host and scheme), naming no client. */
const PASSED_ON_HEADERS = ['via', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port'] as const;
/** All of them: a request with none came straight from its peer, as far as it can tell. */
const FORWARDING_HEADERS: readonly string[] = Object.freeze([...CLIENT_HEADERS, ...PASSED_ON_HEADERS]);

/** Whether the request carries any of the FORWARDING_HEADERS: a few property reads, for every request of a debug server. */
export function hasForwardingHeaders(headers: IncomingHttpHeaders): boolean {
  for (let i = 0; i < FORWARDING_HEADERS.length; i++) if (headers[FORWARDING_HEADERS[i]!] !== undefined) return true;
  return false;
}

/** Whether X-Forwarded-For names a hop: from a trusted proxy, that hop (or one before it) is the client the Request's clientIp judges. */
export function namesForwardedFor(headers: IncomingHttpHeaders): boolean {
  const value = headers['x-forwarded-for'];
  return value !== undefined && listItems(value, ',').some((hop) => hop.trim() !== '');
}

/**
 * Whether the forwarding headers of a request passed on by a proxy that is not trusted name at least one
 * client, and only clients `allowedClient` allows and hosts (X-Forwarded-Host) `allowedHost` allows. Every
 * hop counts, the ones a client may have written too: a header can only hide more, never show more. A
 * `Forwarded` element without `for=` names no client; `for=unknown` and `for=_hidden` name no address.
 */
export function forwardedForAllowed(headers: IncomingHttpHeaders, allowedClient: (ip: string) => boolean, allowedHost: (host: string) => boolean): boolean {
  let named = false;
  for (const name of CLIENT_HEADERS) {
    const value = headers[name];
    if (value === undefined) continue;
    // Split on `;` too for Forwarded: a quoted `,` or `;` a client wrote cuts no proxy's `for=` out of the list.
    for (const item of listItems(value, name === 'forwarded' ? /[,;]/ : ',')) {
      let hop = item.trim();
      if (name === 'forwarded') {
        if (hop.length < 4 || hop.slice(0, 4).toLowerCase() !== 'for=') continue;
        hop = unquoted(hop.slice(4).trim());
      }
      if (hop === '') continue;
      named = true;
      if (!allowedClient(stripMapped(hopAddress(hop)))) return false;
    }
  }
  if (!named) return false;
  const forwardedHost = headers['x-forwarded-host'];
  if (forwardedHost !== undefined) {
    for (const item of listItems(forwardedHost, ',')) {
      const host = withoutPort(item.trim().toLowerCase());
      if (host !== '' && !allowedHost(host)) return false;
    }
  }
  return true;
}

function listItems(value: string | string[], separator: string | RegExp): string[] {
  return (Array.isArray(value) ? value.join(',') : value).split(separator);
}

function unquoted(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

/** `host:port` without its port; a bracketed IPv6 address keeps its brackets, as isLocalName reads it. Anything else after `]` is kept, for the host check to refuse. */
function withoutPort(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end !== -1 && (end === host.length - 1 || host.charCodeAt(end + 1) === 58) /* : */ ? host.slice(0, end + 1) : host;
  }
  const colon = host.indexOf(':');
  return colon !== -1 && colon === host.lastIndexOf(':') ? host.slice(0, colon) : host;
}
