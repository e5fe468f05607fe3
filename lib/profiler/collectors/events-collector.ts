import { traceEvent, traceSite, type TraceSite, type TraceableEventDispatcher } from '../../../kernel/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import { jsonNumber, jsonString } from '../json.js';
import { RawJson, type EventsData, type NotCalledListenerData, type Profile, type StoredEventsData, type TimeData, type TimelinePeriod } from '../profile.js';

/** Listeners called (in order, with priority and duration), not called, and orphaned events. */
export class EventsCollector implements DataCollector {
  readonly name = 'events';

  /** JSON of the dispatcher's cached not-called lists, kept as long as the list. */
  readonly #notCalledJsons = new WeakMap<readonly NotCalledListenerData[], string>();

  constructor(readonly dispatcher: TraceableEventDispatcher) {}

  /**
   * The trace as StoredEventsData, written as JSON straight from the dispatcher's compact trace:
   * no object per listener call, and this runs for every request.
   */
  lateCollect({ request, startNow }: CollectContext): RawJson {
    const trace = this.dispatcher.getCompactTrace(request);
    const log = trace.log;
    const calls: string[] = [];
    const dispatches: string[] = [];
    let orphaned: string[] | undefined;
    for (let i = 0; i < log.length; i += 3) {
      const ref = log[i]!;
      if (ref >= 0) {
        calls.push(`[${siteJson(traceSite(trace, ref))},${micros(log[i + 1]! - startNow)},${micros(log[i + 2]!)}${(ref & 1) === 1 ? ',1]' : ']'}`);
        continue;
      }
      const event = jsonString(traceEvent(trace, ref));
      dispatches.push(`[${event},${micros(log[i + 1]! - startNow)},${micros(log[i + 2]!)}]`);
      // Orphaned: nobody listened. Listed once each, in order of first dispatch.
      if (((-ref - 1) & 1) === 1 && !(orphaned ??= []).includes(event)) orphaned.push(event);
    }
    const notCalled = this.#notCalledJson(this.dispatcher.getNotCalledListeners(request));
    return new RawJson(['{"calls":[', calls.join(','), '],"dispatches":[', dispatches.join(','), '],"notCalled":', notCalled, ',"orphaned":[', orphaned?.join(',') ?? '', ']}'].join(''));
  }

  #notCalledJson(list: readonly NotCalledListenerData[]): string {
    let json = this.#notCalledJsons.get(list);
    if (json === undefined) {
      json = JSON.stringify(list);
      this.#notCalledJsons.set(list, json);
    }
    return json;
  }

  present(data: unknown): EventsData {
    return presentEvents(data);
  }
}

/** The stored events data as pages show it (times in milliseconds); data already in that shape is kept. */
export function presentEvents(data: unknown): EventsData {
  const stored = (data instanceof RawJson ? JSON.parse(data.json) : data) as Partial<StoredEventsData & EventsData> | null;
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

/** A listener's `"event","listener",priority` as JSON, made once per listener. */
const siteJsons = new WeakMap<TraceSite, string>();

function siteJson(site: TraceSite): string {
  let json = siteJsons.get(site);
  if (json === undefined) {
    // jsonNumber: a priority may be Infinity, which JSON has as null.
    json = `${jsonString(site.event)},${jsonString(site.listener)},${jsonNumber(site.priority)}`;
    siteJsons.set(site, json);
  }
  return json;
}

/** Whole microseconds, as JSON: integers serialise several times faster than fractional milliseconds. */
function micros(ms: number): string {
  return jsonNumber(Math.round(ms * 1000));
}

/** The request's timeline: each event dispatch and listener, the controller, and the total. */
export class TimeCollector implements DataCollector {
  readonly name = 'time';

  /** Only the total is stored (TimeData without periods): the periods come from the events collector's trace when the profile is read. */
  lateCollect({ startNow, endNow, startTime }: CollectContext): RawJson {
    return new RawJson(`{"startTime":${jsonNumber(startTime)},"duration":${jsonNumber(round(endNow - startNow))}}`);
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
