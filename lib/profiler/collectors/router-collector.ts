import type { UrlMatcher } from '../../routing/index.js';
import type { DataCollector } from '../data-collector.js';
import { RawJson, type Profile, type RouterData } from '../profile.js';
import type { Redactor } from '../redactor.js';
import { presentRequest } from './request-collector.js';

/** The matched route and its parameters, and why each route did or did not match (worked out when the profile is read). */
export class RouterCollector implements DataCollector {
  readonly name = 'router';
  /** Its lateCollect only reads: a provisional view may run it too. */
  readonly provisional = true;

  constructor(
    readonly matcher: UrlMatcher,
    readonly redactor: Redactor,
  ) {}

  /**
   * Nothing per request: the route and its parameters are the request's attributes, what was
   * routed is the profile's method and URL with the request's path, and a redirect is a 301's
   * Location, all of which the profile and the request collector keep. present() works them out.
   */
  lateCollect(): RawJson {
    return NOTHING;
  }

  /** The route, its parameters, what was routed and the redirect (from the request data), and each route's verdict on it, worked out now against the current routes. */
  present(data: unknown, profile: Profile): RouterData {
    const stored = (data !== null && typeof data === 'object' ? data : {}) as Partial<RouterData>;
    // Profiles saved before these were left to the request data have them here.
    const router: RouterData = { ...derivedRouterData(profile), ...stored };
    const routed = router.routed;
    let traces: RouterData['traces'] = [];
    if (routed !== null && routed !== undefined) {
      try {
        traces = this.matcher.explain(routed.path, { method: routed.method, host: routed.host, scheme: routed.scheme === "https" ? "https" : "http" }).map((t) => ({ name: t.name, path: t.path, verdict: t.verdict, reason: t.reason }));
      } catch {
        // Routed data the matcher refuses (stored by an older version): no verdicts, `traces` stays empty.
      }
    }
    return { ...router, traces };
  }
}

/** What a router collector stores for each request. */
const NOTHING = new RawJson('{}');

/** RouterData but for the traces, from the profile's summary and its request data. */
function derivedRouterData(profile: Profile): RouterData {
  const request = presentRequest(profile.collectors['request'], profile);
  const location = request.responseHeaders['location'];
  // A sub-request made with its own controller was never routed; an unusable Host header left no absolute URL to explain.
  let routed: RouterData['routed'] = null;
  if (request.requestType === 'main' || request.route !== null) {
    const url = parseUrl(request.url);
    if (url !== null) routed = { method: request.method, path: request.path, host: url.hostname, scheme: url.protocol.slice(0, -1) };
  }
  // Any redirect, as Symfony's RouterDataCollector records a RedirectResponse: the router's own (no route then) or a controller's.
  const redirect = profile.status >= 300 && profile.status < 400 && typeof location === 'string' ? location : null;
  return { route: request.route, params: request.routeParams, redirect, routed };
}

function parseUrl(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}
