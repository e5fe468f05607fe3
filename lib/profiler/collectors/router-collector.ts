import type { UrlMatcher } from '../../routing/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import type { RouterData } from '../profile.js';
import type { Redactor } from '../redactor.js';

/** The matched route and its parameters, and why each route did or did not match (worked out when the profile is read). */
export class RouterCollector implements DataCollector {
  readonly name = 'router';

  constructor(
    readonly matcher: UrlMatcher,
    readonly redactor: Redactor,
  ) {}

  lateCollect({ request, response, requestType }: CollectContext): RouterData {
    const route = (request.attributes.get('_route') as string | undefined) ?? null;
    let routed: RouterData['routed'] = null;
    // A sub-request made with its own controller was never routed.
    if (requestType === 'main' || route !== null) {
      try {
        routed = { method: request.method, path: request.path, host: request.host, scheme: request.scheme };
      } catch {
        routed = null; // an unusable Host header: nothing to explain
      }
    }
    return {
      route,
      params: this.redactor.value(request.attributes.get('_route_params') ?? {}) as Record<string, unknown>,
      redirect: response.status === 301 ? (response.getHeader('location') ?? null) : null,
      routed,
    };
  }

  /** Each route's verdict on what was routed, worked out now, against the current routes. */
  present(data: unknown): RouterData {
    const router = data as RouterData;
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
