import type { TraceableEventDispatcher } from '../../../kernel/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import type { EventsData, Profile, TimeData, TimelinePeriod } from '../profile.js';

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
      // `stoppedPropagation` only where true: most calls don't stop, and every byte is serialized per request.
      called: trace.calls.map((call) =>
        call.stoppedPropagation
          ? { event: call.event, listener: call.listener, priority: call.priority, start: round(call.start - startNow), duration: round(call.duration), stoppedPropagation: true }
          : { event: call.event, listener: call.listener, priority: call.priority, start: round(call.start - startNow), duration: round(call.duration) },
      ),
      dispatches: trace.dispatches.map((dispatch) => ({ event: dispatch.event, start: round(dispatch.start - startNow), duration: round(dispatch.duration) })),
      notCalled: this.dispatcher.getNotCalledListeners(request),
      orphaned: [...trace.orphaned],
    };
  }
}

/** The request's timeline: each event dispatch and listener, the controller, and the total. */
export class TimeCollector implements DataCollector {
  readonly name = 'time';

  /** Only the total is stored: the periods come from the events collector's trace when the profile is read. */
  collect({ startNow, endNow, startTime }: CollectContext): TimeData {
    return { startTime, duration: round(endNow - startNow) };
  }

  present(data: unknown, profile: Profile): TimeData {
    const time = data as TimeData;
    const events = profile.collectors['events'] as Partial<EventsData> | undefined;
    const dispatches = Array.isArray(events?.dispatches) ? events.dispatches : [];
    const calls = Array.isArray(events?.called) ? events.called : [];
    const periods: TimelinePeriod[] = [];
    for (let i = 0; i < dispatches.length; i++) {
      const dispatch = dispatches[i]!;
      periods.push({ name: dispatch.event, category: 'event', start: dispatch.start, duration: dispatch.duration });
      // The controller runs between the end of controller_arguments and the next dispatch (view or response).
      if (dispatch.event === 'kernel.controller_arguments' && i + 1 < dispatches.length) {
        const end = dispatch.start + dispatch.duration;
        periods.push({ name: 'controller', category: 'controller', start: round(end), duration: round(dispatches[i + 1]!.start - end) });
      }
    }
    for (const call of calls) periods.push({ name: call.listener, category: 'listener', start: call.start, duration: call.duration });
    periods.sort((a, b) => a.start - b.start || categoryOrder(a) - categoryOrder(b));
    return { ...time, periods };
  }
}

function categoryOrder(period: TimelinePeriod): number {
  return period.category === 'event' ? 0 : period.category === 'controller' ? 1 : 2;
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
