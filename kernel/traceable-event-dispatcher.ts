import { performance } from 'node:perf_hooks';
import { EventDispatcher, isPromiseLike, type EventSubscriber, type Listener, type ListenerEntry, type StoppableEvent } from './event-dispatcher.js';
import { Request, RequestSlot } from './request.js';
import type { RequestStack } from './request-stack.js';

/** One listener call, as the profiler's events and timeline panels show it. */
export interface CalledListener {
  event: string;
  listener: string;
  priority: number;
  /** `performance.now()` milliseconds when the call began. */
  start: number;
  /** Milliseconds until it returned (or its promise settled). */
  duration: number;
  /** Whether this listener stopped propagation. */
  stoppedPropagation: boolean;
}

/** A listener that was registered but not called while handling the request. */
export interface NotCalledListener {
  event: string;
  listener: string;
  priority: number;
}

/** One dispatch of an event, with or without listeners. */
export interface DispatchRecord {
  event: string;
  /** `performance.now()` milliseconds when the dispatch began. */
  start: number;
  /** Milliseconds until the last listener returned (0 when none listened). */
  duration: number;
}

/** What one request's dispatches did. */
export interface DispatchTrace {
  calls: CalledListener[];
  /** Every dispatch, in start order: the timeline's sections. */
  dispatches: DispatchRecord[];
  /** Events dispatched with no listener at all. */
  orphaned: string[];
  /** A short id of each listener called, in order: the key of the not-called cache. */
  path: string;
}

/** Distinct call sequences whose not-called list is remembered. */
const NOT_CALLED_CACHE_SIZE = 256;

/**
 * The dispatcher used in debug mode: the same behaviour, plus a per-request record
 * of every listener called (with priority and duration), for the profiler.
 */
export class TraceableEventDispatcher extends EventDispatcher {
  readonly #traces = new RequestSlot<DispatchTrace>();
  /**
   * Not-called lists by the sequence of listeners called: requests down the same path call the
   * same listeners, so the registry is walked once per path, not per request. Emptied whenever
   * the registry changes; bounded.
   */
  readonly #notCalled = new Map<string, readonly NotCalledListener[]>();
  /** Short ids of registered listeners, for the trace's path. */
  readonly #ids = new Map<ListenerEntry, string>();
  /** Never reused, so a request traced across a registry change cannot hit another path's list. */
  #nextId = 0;

  constructor(readonly requestStack: RequestStack) {
    super();
  }

  /** What has been recorded for a request so far. */
  getTrace(request: Request): DispatchTrace {
    let trace = this.#traces.get(request);
    if (trace === undefined) {
      trace = { calls: [], dispatches: [], orphaned: [], path: '' };
      this.#traces.set(request, trace);
    }
    return trace;
  }

  /** The listeners called while handling the request, in call order. */
  getCalledListeners(request: Request): CalledListener[] {
    return this.getTrace(request).calls;
  }

  /** The registered listeners that were not called while handling the request. */
  getNotCalledListeners(request: Request): readonly NotCalledListener[] {
    const { calls, path: key } = this.getTrace(request);
    let notCalled = this.#notCalled.get(key);
    if (notCalled === undefined) {
      const called = new Set(calls.map((call) => `${call.event}\0${call.listener}`));
      const list: NotCalledListener[] = [];
      for (const event of this.getEventNames()) {
        for (const entry of this.getListenerEntries(event)) {
          if (!called.has(`${event}\0${entry.name}`)) list.push(Object.freeze({ event, listener: entry.name, priority: entry.priority }));
        }
      }
      notCalled = Object.freeze(list);
      if (this.#notCalled.size >= NOT_CALLED_CACHE_SIZE) this.#notCalled.clear();
      this.#notCalled.set(key, notCalled);
    }
    return notCalled;
  }

  override addListener(eventName: string, listener: Listener, priority?: number, name?: string): void {
    this.#changed();
    super.addListener(eventName, listener, priority, name);
  }

  override removeListener(eventName: string, listener: Listener): void {
    this.#changed();
    super.removeListener(eventName, listener);
  }

  override addSubscriber(subscriber: EventSubscriber): void {
    this.#changed();
    super.addSubscriber(subscriber);
  }

  override removeSubscriber(subscriber: EventSubscriber): void {
    this.#changed();
    super.removeSubscriber(subscriber);
  }

  #changed(): void {
    this.#notCalled.clear();
    this.#ids.clear();
  }

  #record(trace: DispatchTrace, event: string, entry: ListenerEntry, start: number, dispatched: StoppableEvent): void {
    let id = this.#ids.get(entry);
    if (id === undefined) {
      id = `${(this.#nextId++).toString(36)},`;
      this.#ids.set(entry, id);
    }
    trace.path += id;
    record(trace, event, entry, start, dispatched);
  }

  /** Events dispatched with no listener while handling the request. */
  getOrphanedEvents(request: Request): string[] {
    return this.getTrace(request).orphaned;
  }

  override dispatch<E extends StoppableEvent>(event: E, eventName: string): E | Promise<E> {
    const carried = (event as { request?: unknown }).request;
    const request = carried instanceof Request ? carried : this.requestStack.getCurrentRequest();
    if (request === undefined) return super.dispatch(event, eventName);
    const trace = this.getTrace(request);
    const entries = this.getListenerEntries(eventName);
    const dispatch: DispatchRecord = { event: eventName, start: performance.now(), duration: 0 };
    trace.dispatches.push(dispatch);
    if (entries.length === 0) {
      if (!trace.orphaned.includes(eventName)) trace.orphaned.push(eventName);
      return event;
    }
    for (let i = 0; i < entries.length; i++) {
      if (event.propagationStopped === true) break;
      const entry = entries[i]!;
      const start = performance.now();
      let result: unknown;
      try {
        result = entry.listener(event, eventName, this);
      } catch (error) {
        this.#record(trace, eventName, entry, start, event);
        throw error;
      }
      if (isPromiseLike(result)) return this.#dispatchRest(result, start, entries, i, event, eventName, trace, dispatch);
      this.#record(trace, eventName, entry, start, event);
    }
    dispatch.duration = performance.now() - dispatch.start;
    return event;
  }

  async #dispatchRest<E extends StoppableEvent>(
    pending: PromiseLike<unknown>,
    pendingStart: number,
    entries: readonly ListenerEntry[],
    index: number,
    event: E,
    eventName: string,
    trace: DispatchTrace,
    dispatch: DispatchRecord,
  ): Promise<E> {
    try {
      await pending;
    } finally {
      this.#record(trace, eventName, entries[index]!, pendingStart, event);
    }
    for (let i = index + 1; i < entries.length; i++) {
      if (event.propagationStopped === true) break;
      const entry = entries[i]!;
      const start = performance.now();
      try {
        const result = entry.listener(event, eventName, this);
        if (isPromiseLike(result)) await result;
      } finally {
        this.#record(trace, eventName, entry, start, event);
      }
    }
    dispatch.duration = performance.now() - dispatch.start;
    return event;
  }
}

function record(trace: DispatchTrace, event: string, entry: ListenerEntry, start: number, dispatched: StoppableEvent): void {
  trace.calls.push({
    event,
    listener: entry.name,
    priority: entry.priority,
    start,
    duration: performance.now() - start,
    stoppedPropagation: dispatched.propagationStopped === true,
  });
}
