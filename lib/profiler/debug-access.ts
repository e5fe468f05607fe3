import { isIP } from 'node:net';
import proxyaddr from 'proxy-addr';
import type { Request } from '../../kernel/index.js';

/** Who may see the profiler and debug details: loopback only, unless configured. */
export const DEFAULT_PROFILER_ALLOW: readonly string[] = Object.freeze(['loopback']);

/** Distinct client IPs whose verdict is remembered; the cache starts over beyond it. */
const VERDICT_CACHE_SIZE = 4096;

/**
 * Decides per request whether the client may see profiler pages, stack traces, logs
 * and debug headers. The client IP honours X-Forwarded-For only from trusted proxies,
 * so it cannot be spoofed with a header.
 */
export class DebugAccess {
  readonly allow: readonly string[];
  readonly #matches: (address: string, index: number) => boolean;
  /** Verdicts by client IP: parsing the address is the dear part, and clients come back. */
  readonly #verdicts = new Map<string, boolean>();

  /** `allow`: CIDR ranges, addresses, or `loopback` / `linklocal` / `uniquelocal`. Throws a TypeError naming a bad entry. */
  constructor(allow: readonly string[] = DEFAULT_PROFILER_ALLOW) {
    this.allow = allow;
    this.#matches = proxyaddr.compile([...allow]);
  }

  isAllowed(request: Request): boolean {
    const ip = request.clientIp;
    let verdict = this.#verdicts.get(ip);
    if (verdict === undefined) {
      // proxy-addr reads `2130706433`, `0x7f000001` and `0177.0.0.1` as 127.0.0.1: a forwarded hop
      // that is no address in the usual notation (as a proxy never writes one) is no allowed client.
      verdict = isIP(ip) !== 0 && this.#matches(ip, 0);
      if (this.#verdicts.size >= VERDICT_CACHE_SIZE) this.#verdicts.clear();
      this.#verdicts.set(ip, verdict);
    }
    return verdict;
  }
}
