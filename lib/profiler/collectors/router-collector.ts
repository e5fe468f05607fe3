import type { UrlMatcher } from '../../routing/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import type { RouterData } from '../profile.js';
import { jsonSafe } from './request-collector.js';

/** The matched route and its parameters, or why each route did not match (worked out after the response). */
export class RouterCollector implements DataCollector {
  readonly name = 'router';

  constructor(readonly matcher: UrlMatcher) {}

  collect({ response }: CollectContext): { redirect: string | null } {
    return { redirect: response.status === 301 ? (response.getHeader('location') ?? null) : null };
  }

  lateCollect({ request, requestType }: CollectContext, collected: unknown): RouterData {
    const route = (request.attributes.get('_route') as string | undefined) ?? null;
    let traces: RouterData['traces'] = [];
    // A sub-request made with its own controller was never routed.
    if (requestType === 'main' || route !== null) {
      try {
        traces = this.matcher.explain(request.path, { method: request.method, host: request.host, scheme: request.scheme }).map((t) => ({ name: t.name, path: t.path, verdict: t.verdict, reason: t.reason }));
      } catch {
        traces = [];
      }
    }
    return {
      route,
      params: jsonSafe(request.attributes.get('_route_params') ?? {}) as Record<string, unknown>,
      redirect: (collected as { redirect: string | null } | null)?.redirect ?? null,
      traces,
    };
  }
}
