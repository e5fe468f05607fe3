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

/** What one request's dispatches did, as objects (see `getCompactTrace` for the stored form). */
export interface DispatchTrace {
  calls: CalledListener[];
  /** Every dispatch, in start order: the timeline's sections. */
  dispatches: DispatchRecord[];
  /** Events dispatched with no listener at all. */
  orphaned: string[];
}

/** A registered listener as a compact trace refers to it. */
export interface TraceSite {
  readonly event: string;
  readonly listener: string;
  readonly priority: number;
}

/**
 * One request's trace as it is recorded: numbers only, three per record, in one array (one
 * backing store of doubles, however many listeners run), so a request in flight keeps a few
 * hundred bytes alive instead of an object per listener call. Records, in the order they ended
 * (a listener call) or began (a dispatch):
 * - a listener call: `[ref, start, duration]` with `ref >= 0`; `sites[ref >> 1]` is the listener,
 *   and bit 0 of `ref` is set when it stopped propagation;
 * - a dispatch: `[ref, start, duration]` with `ref < 0`; `events[(-ref - 1) >> 1]` is the event,
 *   and bit 0 of `-ref - 1` is set when nobody listened (an orphaned event).
 * `start` is `performance.now()` milliseconds, `duration` milliseconds.
 */
export interface CompactTrace {
  readonly log: readonly number[];
  readonly sites: readonly TraceSite[];
  readonly events: readonly string[];
}

/** The listener of a call record's `ref` (see CompactTrace). */
export function traceSite(trace: CompactTrace, ref: number): TraceSite {
  return trace.sites[ref >> 1]!;
}

/** The event of a dispatch record's `ref` (see CompactTrace). */
export function traceEvent(trace: CompactTrace, ref: number): string {
  return trace.events[(-ref - 1) >> 1]!;
}

/** Ids of listeners and events, shared by the traces that began while it was current. */
interface TraceTable {
  readonly sites: TraceSite[];
  readonly siteIds: Map<ListenerEntry, number>;
  readonly events: string[];
  readonly eventIds: Map<string, number>;
}

/** A node of the tree of call sequences: requests that called the same listeners share one, and its not-called list. */
interface PathNode {
  next: Map<number, PathNode> | undefined;
  notCalled: readonly NotCalledListener[] | undefined;
}

interface Trace extends CompactTrace {
  readonly log: number[];
  readonly table: TraceTable;
  /** Where the sequence of listeners called so far leads in the path tree. */
  node: PathNode;
}

/** Distinct call sequences (path tree nodes) whose not-called list is remembered. */
const PATH_NODES_MAX = 4096;

/** Listeners or event names in one id table; past it (listeners added and removed without end) a new table starts. */
const TABLE_MAX = 65_536;

/**
 * The dispatcher used in debug mode: the same behaviour, plus a per-request record
 * of every listener called (with priority and duration), for the profiler.
 */
export class TraceableEventDispatcher extends EventDispatcher {
  readonly #traces = new RequestSlot<Trace>();
  #table: TraceTable = newTable();
  /**
   * The not-called lists by sequence of listeners called: requests down the same path call the
   * same listeners, so the registry is walked once per path, not per request. A new tree whenever
   * the registry changes; bounded.
   */
  #paths: PathNode = newNode();
  #pathNodes = 0;

  constructor(readonly requestStack: RequestStack) {
    super();
  }

  /** What has been recorded for a request so far, in its compact form (nothing is copied). */
  getCompactTrace(request: Request): CompactTrace {
    return this.#trace(request);
  }

  /** What has been recorded for a request so far, as objects. */
  getTrace(request: Request): DispatchTrace {
    const trace = this.#trace(request);
    const result: DispatchTrace = { calls: [], dispatches: [], orphaned: [] };
    const log = trace.log;
    for (let i = 0; i < log.length; i += 3) {
      const ref = log[i]!;
      if (ref >= 0) {
        const site = traceSite(trace, ref);
        result.calls.push({ event: site.event, listener: site.listener, priority: site.priority, start: log[i + 1]!, duration: log[i + 2]!, stoppedPropagation: (ref & 1) === 1 });
      } else {
        const event = traceEvent(trace, ref);
        result.dispatches.push({ event, start: log[i + 1]!, duration: log[i + 2]! });
        if (((-ref - 1) & 1) === 1 && !result.orphaned.includes(event)) result.orphaned.push(event);
      }
    }
    return result;
  }

  /** The listeners called while handling the request, in call order. */
  getCalledListeners(request: Request): CalledListener[] {
    return this.getTrace(request).calls;
  }

  /** Events dispatched with no listener while handling the request. */
  getOrphanedEvents(request: Request): string[] {
    return this.getTrace(request).orphaned;
  }

  /** The registered listeners that were not called while handling the request (the same list for requests down the same path). */
  getNotCalledListeners(request: Request): readonly NotCalledListener[] {
    const trace = this.#trace(request);
    const node = trace.node;
    if (node.notCalled !== undefined) return node.notCalled;
    const called = new Set<string>();
    const log = trace.log;
    for (let i = 0; i < log.length; i += 3) {
      const ref = log[i]!;
      if (ref < 0) continue;
      const site = traceSite(trace, ref);
      called.add(`${site.event}\0${site.listener}`);
    }
    const list: NotCalledListener[] = [];
    for (const event of this.getEventNames()) {
      for (const entry of this.getListenerEntries(event)) {
        if (!called.has(`${event}\0${entry.name}`)) list.push(Object.freeze({ event, listener: entry.name, priority: entry.priority }));
      }
    }
    node.notCalled = Object.freeze(list);
    return node.notCalled;
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

  override dispatch<E extends StoppableEvent>(event: E, eventName: string): E | Promise<E> {
    const carried = (event as { request?: unknown }).request;
    const request = carried instanceof Request ? carried : this.requestStack.getCurrentRequest();
    if (request === undefined) return super.dispatch(event, eventName);
    const trace = this.#trace(request);
    const entries = this.getListenerEntries(eventName);
    const log = trace.log;
    const at = log.length;
    const start = performance.now();
    log.push(-1 - (eventId(trace.table, eventName) * 2 + (entries.length === 0 ? 1 : 0)), start, 0);
    for (let i = 0; i < entries.length; i++) {
      if (event.propagationStopped === true) break;
      const entry = entries[i]!;
      const callStart = performance.now();
      let result: unknown;
      try {
        result = entry.listener(event, eventName, this);
      } catch (error) {
        this.#record(trace, eventName, entry, callStart, event);
        throw error;
      }
      if (isPromiseLike(result)) return this.#dispatchRest(result, callStart, entries, i, event, eventName, trace, at);
      this.#record(trace, eventName, entry, callStart, event);
    }
    if (entries.length > 0) log[at + 2] = performance.now() - start;
    return event;
  }

  async #dispatchRest<E extends StoppableEvent>(
    pending: PromiseLike<unknown>,
    pendingStart: number,
    entries: readonly ListenerEntry[],
    index: number,
    event: E,
    eventName: string,
    trace: Trace,
    at: number,
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
    trace.log[at + 2] = performance.now() - trace.log[at + 1]!;
    return event;
  }

  #trace(request: Request): Trace {
    let trace = this.#traces.get(request);
    if (trace === undefined) {
      // Listeners added and removed without end (or endless event names) would grow a table forever.
      if (this.#table.sites.length >= TABLE_MAX || this.#table.events.length >= TABLE_MAX) this.#table = newTable();
      const table = this.#table;
      trace = { log: [], table, sites: table.sites, events: table.events, node: this.#paths };
      this.#traces.set(request, trace);
    }
    return trace;
  }

  #record(trace: Trace, eventName: string, entry: ListenerEntry, start: number, dispatched: StoppableEvent): void {
    const table = trace.table;
    const id = table.siteIds.get(entry) ?? this.#addSite(table, eventName, entry);
    trace.log.push(id * 2 + (dispatched.propagationStopped === true ? 1 : 0), start, performance.now() - start);
    const node = trace.node;
    trace.node = node.next?.get(id) ?? this.#addPathNode(node, id);
  }

  #addSite(table: TraceTable, eventName: string, entry: ListenerEntry): number {
    const id = table.sites.length;
    table.sites.push(Object.freeze({ event: eventName, listener: entry.name, priority: entry.priority }));
    table.siteIds.set(entry, id);
    return id;
  }

  #addPathNode(parent: PathNode, id: number): PathNode {
    const node = newNode();
    // Past the bound, unusual paths get a node of their own: correct, just not shared.
    if (this.#pathNodes >= PATH_NODES_MAX) return node;
    this.#pathNodes++;
    (parent.next ??= new Map()).set(id, node);
    return node;
  }

  #changed(): void {
    this.#paths = newNode();
    this.#pathNodes = 0;
  }
}

function newTable(): TraceTable {
  return { sites: [], siteIds: new Map(), events: [], eventIds: new Map() };
}

function newNode(): PathNode {
  return { next: undefined, notCalled: undefined };
}

function eventId(table: TraceTable, eventName: string): number {
  let id = table.eventIds.get(eventName);
  if (id === undefined) {
    id = table.events.length;
    table.events.push(eventName);
    table.eventIds.set(eventName, id);
  }
  return id;
}
