import type { UrlMatcher } from '../../routing/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import { jsonString, jsonStringOrNull } from '../json.js';
import { RawJson, type Profile, type RouterData } from '../profile.js';
import type { Redactor } from '../redactor.js';
import { presentRequest } from './request-collector.js';

/** The matched route and its parameters, and why each route did or did not match (worked out when the profile is read). */
export class RouterCollector implements DataCollector {
  readonly name = 'router';

  constructor(
    readonly matcher: UrlMatcher,
    readonly redactor: Redactor,
  ) {}

  /**
   * What was routed and the redirect, if any, as JSON. The route and its parameters are the
   * request's attributes, which the request collector stores: present() reads them there.
   */
  lateCollect({ request, response, requestType }: CollectContext): RawJson {
    const route = (request.attributes.get('_route') as string | undefined) ?? null;
    let routed = 'null';
    // A sub-request made with its own controller was never routed.
    if (requestType === 'main' || route !== null) {
      try {
        routed = `{"method":${jsonString(request.method)},"path":${jsonString(request.path)},"host":${jsonString(request.host)},"scheme":${jsonString(request.scheme)}}`;
      } catch {
        routed = 'null'; // an unusable Host header: nothing to explain
      }
    }
    const redirect = jsonStringOrNull(response.status === 301 ? response.getHeader('location') : null);
    return new RawJson(`{"redirect":${redirect},"routed":${routed}}`);
  }

  /** The route and its parameters (from the request data), and each route's verdict on what was routed, worked out now against the current routes. */
  present(data: unknown, profile: Profile): RouterData {
    const stored = data as Partial<RouterData>;
    const request = presentRequest(profile.collectors['request'], profile);
    // Profiles saved before the route was left to the request data have it here.
    const router: RouterData = { route: request.route, params: request.routeParams, redirect: null, routed: null, ...stored };
    const routed = router.routed;
    let traces: RouterData['traces'] = [];
    if (routed !== null && routed !== undefined) {
      try {
        traces = this.matcher.explain(routed.path, { method: routed.method, host: routed.host, scheme: routed.scheme === "https" ? "https" : "http" }).map((t) => ({ name: t.name, path: t.path, verdict: t.verdict, reason: t.reason }));
      } catch {
        traces = [];
      }
    }
    return { ...router, traces };
  }
}
