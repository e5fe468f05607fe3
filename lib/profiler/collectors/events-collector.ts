import type { TraceableEventDispatcher } from '../../../kernel/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import type { EventsData, TimeData, TimelinePeriod } from '../profile.js';

/** Listeners called (in order, with priority and duration), not called, and orphaned events. */
export class EventsCollector implements DataCollector {
  readonly name = 'events';

  constructor(readonly dispatcher: TraceableEventDispatcher) {}

  collect(): null {
    return null;
  }

  lateCollect({ request, startNow }: CollectContext): EventsData {
    const trace = this.dispatcher.getTrace(request);
    return {
      called: trace.calls.map((call) => ({ ...call, start: round(call.start - startNow), duration: round(call.duration) })),
      notCalled: this.dispatcher.getNotCalledListeners(request),
      orphaned: [...trace.orphaned],
    };
  }
}

/** The request's timeline: each event dispatch and listener, the controller, and the total. */
export class TimeCollector implements DataCollector {
  readonly name = 'time';

  constructor(readonly dispatcher: TraceableEventDispatcher) {}

  /** The total is known at once (the toolbar may show it before the save); the periods come late. */
  collect({ startNow, endNow, startTime }: CollectContext): TimeData {
    return { startTime, duration: round(endNow - startNow), periods: [] };
  }

  lateCollect({ request, startNow, endNow, startTime }: CollectContext): TimeData {
    const trace = this.dispatcher.getTrace(request);
    const periods: TimelinePeriod[] = [];
    const dispatches = trace.dispatches;
    for (let i = 0; i < dispatches.length; i++) {
      const dispatch = dispatches[i]!;
      periods.push({ name: dispatch.event, category: 'event', start: round(dispatch.start - startNow), duration: round(dispatch.duration) });
      // The controller runs between the end of controller_arguments and the next dispatch (view or response).
      if (dispatch.event === 'kernel.controller_arguments' && i + 1 < dispatches.length) {
        const end = dispatch.start + dispatch.duration;
        periods.push({ name: 'controller', category: 'controller', start: round(end - startNow), duration: round(dispatches[i + 1]!.start - end) });
      }
    }
    for (const call of trace.calls) periods.push({ name: call.listener, category: 'listener', start: round(call.start - startNow), duration: round(call.duration) });
    periods.sort((a, b) => a.start - b.start || categoryOrder(a) - categoryOrder(b));
    return { startTime, duration: round(endNow - startNow), periods };
  }
}

function categoryOrder(period: TimelinePeriod): number {
  return period.category === 'event' ? 0 : period.category === 'controller' ? 1 : 2;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
