import { isIP } from 'node:net';
import { UntrustedHostError, type Request, type TrustHost } from '../../kernel/index.js';
import { isValidHost } from '../../kernel/host-syntax.js';
import { stringCopy } from '../../kernel/string-copy.js';
import { compileAddressList } from '../http/address-list.js';
import { forwardedForAllowed, hasForwardingHeaders, namesForwardedFor } from './forwarding-headers.js';

/** Who may see the profiler and debug details: loopback only, unless configured. */
export const DEFAULT_PROFILER_ALLOW: readonly string[] = Object.freeze(['loopback']);

/** Distinct client IPs (and hosts) whose verdict is remembered; the cache starts over beyond it. */
const VERDICT_CACHE_SIZE = 4096;
/**
 * Longest client IP or host whose verdict is remembered: an address or a DNS name is shorter. A
 * forwarded hop is the client's text (up to the 16 KiB head), and 4,096 of 15 KB held 61 MB.
 */
const VERDICT_KEY_CHARS = 256;

export interface DebugAccessOptions {
  /**
   * Host names debug details are shown on, beside IP addresses, `localhost` and `*.localhost`
   * (createKernel passes its trustedHosts). Default none.
   */
  trustHost?: TrustHost | null;
  /** Called the first time (per verdict cache) an allowed client is refused for its host alone: createKernel logs it. */
  onHiddenHost?: (host: string) => void;
  /**
   * Called the first time (per proxy address) an allowed client's request is refused because it was passed on
   * by a proxy that is not trusted, or by a trusted one whose X-Forwarded-For names no client (`trusted`), for a
   * client the list does not allow or an unknown one: createKernel logs it.
   */
  onUntrustedProxy?: (proxy: string, trusted: boolean) => void;
}

/**
 * Decides per request whether the client may see profiler pages, stack traces, logs
 * and debug headers. Three rules, all must hold:
 * - the client IP is allowed. It honours X-Forwarded-For only from trusted proxies, so it
 *   cannot be spoofed with a header;
 * - a request that a proxy not trusted passed on (to all the peer can tell, one with forwarding
 *   headers: `X-Forwarded-For`, `Forwarded`, `X-Real-IP`, `Via`...), or a trusted one whose
 *   X-Forwarded-For names no client, names only allowed clients, at least one, and only local or
 *   trusted hosts in `X-Forwarded-Host`. An nginx on this machine that is not in the trusted proxies
 *   (or is, but names its client in X-Real-IP alone) makes every internet client a loopback one on an IP host;
 * - the host the request names cannot be another site's: an IP address, `localhost` or
 *   `*.localhost` (which browsers resolve to loopback themselves), or a trusted host. A page
 *   of another site that re-points its own name at 127.0.0.1 (DNS rebinding) reaches us from
 *   a loopback client, but under its own name; so does a tunnel (ngrok and the like)
 *   forwarding the internet from a local process.
 */
export class DebugAccess {
  readonly allow: readonly string[];
  readonly #matches: (address: string, index: number) => boolean;
  readonly #trustHost: TrustHost | null;
  readonly #onHiddenHost: ((host: string) => void) | undefined;
  readonly #onUntrustedProxy: ((proxy: string, trusted: boolean) => void) | undefined;
  readonly #forwardedClientAllowed = (ip: string): boolean => this.#clientAllowed(ip);
  /** A forwarded host as the Request checks a Host header, then as #hostAllowed judges it; not cached, as a client may write any. */
  readonly #forwardedHostAllowed = (host: string): boolean => isValidHost(host) && (isLocalName(host) || (this.#trustHost !== null && this.#trustHost(host)));
  /** Proxies onUntrustedProxy has heard of. */
  readonly #reportedProxies = new Set<string>();
  /** Verdicts by client IP: parsing the address is the dear part, and clients come back. */
  readonly #verdicts = new Map<string, boolean>();
  /** Verdicts by host name. */
  readonly #hostVerdicts = new Map<string, boolean>();

  /** `allow`: CIDR ranges, addresses, or `loopback` / `linklocal` / `uniquelocal`. Throws a TypeError naming a bad entry. */
  constructor(allow: readonly string[] = DEFAULT_PROFILER_ALLOW, options: DebugAccessOptions = {}) {
    this.allow = allow;
    this.#matches = compileAddressList(allow);
    this.#trustHost = options.trustHost ?? null;
    this.#onHiddenHost = options.onHiddenHost;
    this.#onUntrustedProxy = options.onUntrustedProxy;
  }

  /** Characters of the client IPs and hosts whose verdicts are remembered now; for tests of its bound. */
  get cachedChars(): number {
    let chars = 0;
    for (const key of this.#reportedProxies) chars += key.length;
    for (const key of this.#verdicts.keys()) chars += key.length;
    for (const key of this.#hostVerdicts.keys()) chars += key.length;
    return chars;
  }

  isAllowed(request: Request): boolean {
    return this.#clientAllowed(request.clientIp) && this.#passedOnAllowed(request) && this.#hostAllowed(request);
  }

  /**
   * Whether a request from a peer that is no trusted proxy, but carries forwarding headers, was passed
   * on for allowed clients only. Headers are per request: only their addresses' verdicts are cached.
   */
  #passedOnAllowed(request: Request): boolean {
    const headers = request.headers;
    if (!hasForwardingHeaders(headers)) return true;
    // A trusted proxy's X-Forwarded-For names the client that clientIp judged. One that names none there
    // (nginx writing X-Real-IP or X-Forwarded-Proto alone) made clientIp its own address, a loopback one
    // for a proxy on this machine: its headers are judged as an untrusted proxy's, or trusting it would show more.
    const trusted = request.isFromTrustedProxy();
    if (trusted && namesForwardedFor(headers)) return true;
    if (forwardedForAllowed(headers, this.#forwardedClientAllowed, this.#forwardedHostAllowed)) return true;
    const proxy = request.remoteAddress;
    if (this.#onUntrustedProxy !== undefined && !this.#reportedProxies.has(proxy)) {
      if (this.#reportedProxies.size >= VERDICT_CACHE_SIZE) this.#reportedProxies.clear();
      this.#reportedProxies.add(proxy);
      this.#onUntrustedProxy(proxy, trusted);
    }
    return false;
  }

  #clientAllowed(ip: string): boolean {
    let verdict = this.#verdicts.get(ip);
    if (verdict === undefined) {
      // proxy-addr reads `2130706433`, `0x7f000001` and `0177.0.0.1` as 127.0.0.1: a forwarded hop
      // that is no address in the usual notation (as a proxy never writes one) is no allowed client.
      verdict = isIP(ip) !== 0 && this.#matches(ip, 0);
      if (ip.length > VERDICT_KEY_CHARS) return verdict;
      if (this.#verdicts.size >= VERDICT_CACHE_SIZE) this.#verdicts.clear();
      this.#verdicts.set(stringCopy(ip), verdict);
    }
    return verdict;
  }

  #hostAllowed(request: Request): boolean {
    let host: string;
    try {
      host = request.host;
    } catch (error) {
      // A host outside the kernel's trusted hosts is a name someone may own and point at us (DNS
      // rebinding): its 400 is the plain one. One the request refuses otherwise (malformed, several
      // Host headers), which no browser sends, gets a 400 before any page: the router reads the host
      // of every request. That 400 is all such a request can see, with its own logs and trace and
      // nothing of other requests; it may say what is wrong.
      return !(error instanceof UntrustedHostError);
    }
    let verdict = this.#hostVerdicts.get(host);
    if (verdict === undefined) {
      verdict = isLocalName(host) || (this.#trustHost !== null && this.#trustHost(host));
      if (!verdict) this.#onHiddenHost?.(host);
      if (host.length > VERDICT_KEY_CHARS) return verdict;
      if (this.#hostVerdicts.size >= VERDICT_CACHE_SIZE) this.#hostVerdicts.clear();
      this.#hostVerdicts.set(stringCopy(host), verdict);
    }
    return verdict;
  }
}

/** An IP address (`127.0.0.1`, `[::1]`), `localhost` or a name under it (RFC 6761: always loopback, never looked up). */
export function isLocalName(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host.charCodeAt(0) === 91 /* [ */) return host.endsWith(']') && isIP(host.slice(1, -1)) === 6;
  return isIP(host) === 4;
}
