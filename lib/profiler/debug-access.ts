import proxyaddr from 'proxy-addr';
import type { Request } from '../../kernel/index.js';

/** Who may see the profiler and debug details: loopback only, unless configured. */
export const DEFAULT_PROFILER_ALLOW: readonly string[] = Object.freeze(['loopback']);

/**
 * Decides per request whether the client may see profiler pages, stack traces, logs
 * and debug headers. The client IP honours X-Forwarded-For only from trusted proxies,
 * so it cannot be spoofed with a header.
 */
export class DebugAccess {
  readonly allow: readonly string[];
  readonly #matches: (address: string, index: number) => boolean;

  /** `allow`: CIDR ranges, addresses, or `loopback` / `linklocal` / `uniquelocal`. Throws a TypeError naming a bad entry. */
  constructor(allow: readonly string[] = DEFAULT_PROFILER_ALLOW) {
    this.allow = allow;
    this.#matches = proxyaddr.compile([...allow]);
  }

  isAllowed(request: Request): boolean {
    return this.#matches(request.clientIp, 0);
  }
}
