import { traceEvent, traceSite, type CompactTrace, type TracePath, type TraceSite, type TraceableEventDispatcher } from '../../../kernel/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import { flat, jsonNumber, jsonString } from '../json.js';
import { RawJson, type EventsData, type NotCalledListenerData, type Profile, type StoredEventsData, type TimeData, type TimelinePeriod } from '../profile.js';

/** Listeners called (in order, with priority and duration), not called, and orphaned events. */
export class EventsCollector implements DataCollector {
  readonly name = 'events';
  /** Its lateCollect only reads: a provisional view may run it too. */
  readonly provisional = true;

  /**
   * The JSON around the times, by trace path, with the not-called list it was made with (the
   * dispatcher's list for the path and the listeners running then): kept as long as the
   * dispatcher keeps the path.
   */
  readonly #templates = new WeakMap<TracePath, { notCalled: readonly NotCalledListenerData[]; template: readonly string[] }>();

  constructor(readonly dispatcher: TraceableEventDispatcher) {}

  /**
   * The trace as StoredEventsData, written as JSON straight from the dispatcher's compact trace.
   * This runs for every request, and requests down the same path differ only in their times:
   * those are written into a template made once per path.
   */
  lateCollect({ request, startNow }: CollectContext): RawJson {
    const trace = this.dispatcher.getCompactTrace(request);
    const path = this.dispatcher.getTracePath(request);
    const notCalled = this.dispatcher.getNotCalledListeners(request);
    let cached = this.#templates.get(path);
    if (cached === undefined || cached.notCalled !== notCalled) {
      cached = { notCalled, template: this.#template(trace, notCalled) };
      this.#templates.set(path, cached);
    }
    const template = cached.template;
    const log = trace.log;
    // Calls, then dispatches, as the template has them. Appended, not joined: encodeProfile's copy
    // into the slab reads the pieces once; a join here would copy them twice.
    let json = template[0]!;
    let k = 1;
    for (let i = 0; i < log.length; i += 3) {
      if (log[i]! >= 0) json += `${micros(log[i + 1]! - startNow)},${micros(log[i + 2]!)}${template[k++]!}`;
    }
    for (let i = 0; i < log.length; i += 3) {
      if (log[i]! < 0) json += `${micros(log[i + 1]! - startNow)},${micros(log[i + 2]!)}${template[k++]!}`;
    }
    return new RawJson(json);
  }

  /**
   * The JSON of a trace's records but for the times: `template[0]`, then for each call and each
   * dispatch its start and duration (comma-separated) followed by the next piece.
   */
  #template(trace: CompactTrace, notCalled: readonly NotCalledListenerData[]): string[] {
    const log = trace.log;
    const template: string[] = [];
    let text = '{"calls":[';
    for (let i = 0; i < log.length; i += 3) {
      const ref = log[i]!;
      if (ref < 0) continue;
      template.push(`${text}${template.length === 0 ? '' : ','}[${siteJson(traceSite(trace, ref))},`);
      text = (ref & 1) === 1 ? ',1]' : ']';
    }
    text += '],"dispatches":[';
    const dispatchesFrom = template.length;
    const orphaned = new Set<string>();
    for (let i = 0; i < log.length; i += 3) {
      const ref = log[i]!;
      if (ref >= 0) continue;
      const event = jsonString(traceEvent(trace, ref));
      template.push(`${text}${template.length === dispatchesFrom ? '' : ','}[${event},`);
      text = ']';
      // Orphaned: nobody listened. Listed once each, in order of first dispatch (a Set: an array's
      // includes() made a request of many distinct unheard events quadratic).
      if (((-ref - 1) & 1) === 1) orphaned.add(event);
    }
    template.push(`${text}],"notCalled":${JSON.stringify(notCalled)},"orphaned":[${[...orphaned].join(',')}]}`);
    return template.map(flat);
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
  /** Its lateCollect only reads: a provisional view may run it too. */
  readonly provisional = true;

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
