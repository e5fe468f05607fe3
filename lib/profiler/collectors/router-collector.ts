import type { UrlMatcher } from '../../routing/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import { jsonString, jsonStringOrNull } from '../json.js';
import { RawJson, type RouterData } from '../profile.js';
import type { Redactor } from '../redactor.js';

/** The matched route and its parameters, and why each route did or did not match (worked out when the profile is read). */
export class RouterCollector implements DataCollector {
  readonly name = 'router';

  constructor(
    readonly matcher: UrlMatcher,
    readonly redactor: Redactor,
  ) {}

  /** RouterData (without traces), written as JSON. */
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
    const params = this.redactor.valueJson(request.attributes.get('_route_params') ?? {});
    const redirect = jsonStringOrNull(response.status === 301 ? response.getHeader('location') : null);
    return new RawJson(`{"route":${jsonStringOrNull(route)},"params":${params},"redirect":${redirect},"routed":${routed}}`);
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
