import type { TraceableEventDispatcher } from '../../../kernel/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import type { EventsData, Profile, StoredEventsData, TimeData, TimelinePeriod } from '../profile.js';

/** Listeners called (in order, with priority and duration), not called, and orphaned events. */
export class EventsCollector implements DataCollector {
  readonly name = 'events';

  constructor(readonly dispatcher: TraceableEventDispatcher) {}

  collect(): null {
    return null;
  }

  lateCollect({ request, startNow }: CollectContext): StoredEventsData {
    const trace = this.dispatcher.getTrace(request);
    const calls: StoredEventsData['calls'] = [];
    for (const call of trace.calls) {
      const start = micros(call.start - startNow);
      const duration = micros(call.duration);
      calls.push(call.stoppedPropagation ? [call.event, call.listener, call.priority, start, duration, 1] : [call.event, call.listener, call.priority, start, duration]);
    }
    const dispatches: StoredEventsData['dispatches'] = [];
    for (const dispatch of trace.dispatches) dispatches.push([dispatch.event, micros(dispatch.start - startNow), micros(dispatch.duration)]);
    return { calls, dispatches, notCalled: this.dispatcher.getNotCalledListeners(request), orphaned: [...trace.orphaned] };
  }

  present(data: unknown): EventsData {
    return presentEvents(data);
  }
}

/** The stored events data as pages show it (times in milliseconds); data already in that shape is kept. */
export function presentEvents(data: unknown): EventsData {
  const stored = data as Partial<StoredEventsData & EventsData> | null;
  if (stored === null || typeof stored !== 'object') return { called: [], dispatches: [], notCalled: [], orphaned: [] };
  if (!Array.isArray(stored.calls)) return { called: stored.called ?? [], dispatches: stored.dispatches ?? [], notCalled: stored.notCalled ?? [], orphaned: stored.orphaned ?? [] };
  return {
    called: stored.calls.map(([event, listener, priority, start, duration, stopped]) =>
      stopped === 1 ? { event, listener, priority, start: start / 1000, duration: duration / 1000, stoppedPropagation: true } : { event, listener, priority, start: start / 1000, duration: duration / 1000 },
    ),
    dispatches: (Array.isArray(stored.dispatches) ? (stored.dispatches as StoredEventsData['dispatches']) : []).map(([event, start, duration]) => ({ event, start: start / 1000, duration: duration / 1000 })),
    notCalled: stored.notCalled ?? [],
    orphaned: stored.orphaned ?? [],
  };
}

/** Whole microseconds: integers serialise several times faster than fractional milliseconds. */
function micros(ms: number): number {
  return Math.round(ms * 1000);
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
    const { dispatches, called: calls } = presentEvents(profile.collectors['events']);
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
