import { performance } from 'node:perf_hooks';
import { EventDispatcher, isPromiseLike, type EventOf, type EventSubscriber, type Listener, type ListenerEntry, type StoppableEvent } from './event-dispatcher.js';
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

/**
 * What requests whose traces have the same records but for their times share: the same object
 * for each such trace (same dispatches, listeners called, stops) while the registry is
 * unchanged. A key to cache what derives from a trace's records but not its times.
 */
export interface TracePath {
  /** Records in the traces it stands for. */
  readonly records: number;
}

/** Ids of listeners and events, shared by the traces that began while it was current. */
interface TraceTable {
  readonly sites: TraceSite[];
  readonly siteIds: Map<ListenerEntry, number>;
  readonly events: string[];
  readonly eventIds: Map<string, number>;
}

/** A node of the tree of record sequences: requests whose traces recorded the same refs share one, and its not-called list. */
interface PathNode extends TracePath {
  /** The child most requests take, checked before `next` (usually the only one). */
  firstRef: number;
  firstChild: PathNode | undefined;
  next: Map<number, PathNode> | undefined;
  notCalled: readonly NotCalledListener[] | undefined;
  /** The not-called lists asked for while listeners were running, by their refs (see getNotCalledListeners). */
  notCalledWhileRunning: Map<number | string, readonly NotCalledListener[]> | undefined;
}

/** What a dispatch of one event needs, worked out once per registry state: its listeners and their refs. */
interface DispatchPlan {
  readonly table: TraceTable;
  readonly entries: readonly ListenerEntry[];
  /** The dispatch record's ref (see CompactTrace). */
  readonly eventRef: number;
  /** Each listener's call record ref, propagation not stopped. */
  readonly callRefs: readonly number[];
}

interface Trace extends CompactTrace {
  readonly log: number[];
  readonly table: TraceTable;
  /** The tree `node` is in: when there is a new one, the walk starts over. */
  root: PathNode;
  /** Where the first `node.records` records lead in the path tree. */
  node: PathNode;
  /**
   * Refs of the listeners running now for this request, outermost first. A call is recorded when
   * it ends, so a listener that asks for the trace while it runs (the profiler's kernel.terminate
   * listener) is not in the records yet; it is running, not "not called".
   */
  readonly running: number[];
}

/** Distinct record sequences (path tree nodes) whose not-called list (and what the profiler derives) is remembered. */
const PATH_NODES_MAX = 4096;

/** Not-called lists kept per path node for distinct sets of running listeners (in practice one: the profiler's). */
const RUNNING_LISTS_MAX = 8;

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
   * The tree of record sequences (of the current table's refs): requests down the same path share
   * a node, so what derives from the records alone (the not-called list, the profiler's JSON
   * around the times) is worked out once per path, not per request. A new tree whenever the
   * registry or the table changes; bounded.
   */
  #paths: PathNode = newNode(0);
  #pathNodes = 0;
  /** Plans by event name, for the current table and registry. */
  readonly #plans = new Map<string, DispatchPlan>();

  constructor(readonly requestStack: RequestStack) {
    super();
  }

  /**
   * When the first dispatch traced for a request began (`performance.now()` milliseconds), or
   * undefined before any: where the request's timeline starts, so that no listener of it, not
   * even the one asking from within that dispatch, starts before it.
   */
  traceStart(request: Request): number | undefined {
    const log = this.#traces.get(request)?.log;
    return log === undefined || log.length === 0 ? undefined : log[1];
  }

  /** What has been recorded for a request so far, in its compact form (nothing is copied). */
  getCompactTrace(request: Request): CompactTrace {
    return this.#trace(request);
  }

  /** The path of what has been recorded for a request so far (see TracePath). */
  getTracePath(request: Request): TracePath {
    return this.#path(this.#trace(request));
  }

  /** What has been recorded for a request so far, as objects. */
  getTrace(request: Request): DispatchTrace {
    const trace = this.#trace(request);
    const result: DispatchTrace = { calls: [], dispatches: [], orphaned: [] };
    const orphaned = new Set<string>(); // listed once each, in order of first dispatch (a Set keeps it)
    const log = trace.log;
    for (let i = 0; i < log.length; i += 3) {
      const ref = log[i]!;
      if (ref >= 0) {
        const site = traceSite(trace, ref);
        result.calls.push({ event: site.event, listener: site.listener, priority: site.priority, start: log[i + 1]!, duration: log[i + 2]!, stoppedPropagation: (ref & 1) === 1 });
      } else {
        const event = traceEvent(trace, ref);
        result.dispatches.push({ event, start: log[i + 1]!, duration: log[i + 2]! });
        if (((-ref - 1) & 1) === 1) orphaned.add(event);
      }
    }
    result.orphaned = [...orphaned];
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

  /**
   * The registered listeners that were not called while handling the request: neither called nor
   * running now. The same list (the same frozen array) for requests down the same path with the
   * same listeners running.
   */
  getNotCalledListeners(request: Request): readonly NotCalledListener[] {
    const trace = this.#trace(request);
    const node = this.#path(trace);
    const running = trace.running;
    if (running.length === 0) return (node.notCalled ??= this.#notCalled(trace, running));
    // One running listener (the usual case) is keyed by its ref, several by their refs joined.
    const key = running.length === 1 ? running[0]! : running.join(',');
    let list = node.notCalledWhileRunning?.get(key);
    if (list === undefined) {
      list = this.#notCalled(trace, running);
      node.notCalledWhileRunning ??= new Map();
      if (node.notCalledWhileRunning.size < RUNNING_LISTS_MAX) node.notCalledWhileRunning.set(key, list);
    }
    return list;
  }

  #notCalled(trace: Trace, running: readonly number[]): readonly NotCalledListener[] {
    // By registration (site id), not by name: two instances of one subscriber class, or two
    // closures, share a name, and the one not called must still be listed.
    const called = new Set<number>();
    const log = trace.log;
    for (let i = 0; i < log.length; i += 3) {
      const ref = log[i]!;
      if (ref >= 0) called.add(ref >> 1);
    }
    for (const ref of running) called.add(ref >> 1);
    const list: NotCalledListener[] = [];
    const siteIds = trace.table.siteIds;
    for (const event of this.getEventNames()) {
      for (const entry of this.getListenerEntries(event)) {
        const id = siteIds.get(entry);
        if (id === undefined || !called.has(id)) list.push(Object.freeze({ event, listener: entry.name, priority: entry.priority }));
      }
    }
    return Object.freeze(list);
  }

  override addListener<N extends string>(eventName: N, listener: Listener<EventOf<N>>, priority?: number, name?: string): void {
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
    let plan = this.#plans.get(eventName);
    if (plan === undefined || plan.table !== trace.table) plan = this.#plan(trace.table, eventName);
    const { entries, callRefs } = plan;
    const log = trace.log;
    const at = log.length;
    const start = performance.now();
    log.push(plan.eventRef, start, 0);
    // One clock read per listener: a call ends when the next begins (only the push in between).
    let callStart = start;
    const running = trace.running;
    for (let i = 0; i < entries.length; i++) {
      if (event.propagationStopped === true) break;
      let result: unknown;
      running.push(callRefs[i]!);
      try {
        result = entries[i]!.listener(event, eventName, this);
      } catch (error) {
        // Not pop(): an async dispatch the listener started and left running is above it.
        removeRunning(running, callRefs[i]!);
        const end = performance.now();
        log.push(callRefs[i]! + stoppedBit(event), callStart, end - callStart);
        log[at + 2] = end - start;
        throw error;
      }
      if (isPromiseLike(result)) return this.#dispatchRest(result, callStart, plan, i, event, eventName, trace, at);
      removeRunning(running, callRefs[i]!);
      const end = performance.now();
      log.push(callRefs[i]! + stoppedBit(event), callStart, end - callStart);
      callStart = end;
    }
    if (entries.length > 0) log[at + 2] = callStart - start;
    return event;
  }

  async #dispatchRest<E extends StoppableEvent>(
    pending: PromiseLike<unknown>,
    pendingStart: number,
    plan: DispatchPlan,
    index: number,
    event: E,
    eventName: string,
    trace: Trace,
    at: number,
  ): Promise<E> {
    const { entries, callRefs } = plan;
    const log = trace.log;
    try {
      // The pending listener's ref is still on `running` (pushed by dispatch()).
      try {
        await pending;
      } finally {
        removeRunning(trace.running, callRefs[index]!);
        log.push(callRefs[index]! + stoppedBit(event), pendingStart, performance.now() - pendingStart);
      }
      for (let i = index + 1; i < entries.length; i++) {
        if (event.propagationStopped === true) break;
        const start = performance.now();
        trace.running.push(callRefs[i]!);
        try {
          const result = entries[i]!.listener(event, eventName, this);
          if (isPromiseLike(result)) await result;
        } finally {
          removeRunning(trace.running, callRefs[i]!);
          log.push(callRefs[i]! + stoppedBit(event), start, performance.now() - start);
        }
      }
    } finally {
      // Also when a listener failed: the dispatch spans the calls it made.
      log[at + 2] = performance.now() - log[at + 1]!;
    }
    return event;
  }

  #trace(request: Request): Trace {
    let trace = this.#traces.get(request);
    if (trace === undefined) {
      // Listeners added and removed without end (or endless event names) would grow a table forever.
      if (this.#table.sites.length >= TABLE_MAX || this.#table.events.length >= TABLE_MAX) {
        this.#table = newTable();
        this.#changed();
      }
      const table = this.#table;
      trace = { log: [], table, sites: table.sites, events: table.events, root: this.#paths, node: this.#paths, running: [] };
      this.#traces.set(request, trace);
    }
    return trace;
  }

  #plan(table: TraceTable, eventName: string): DispatchPlan {
    const entries = this.getListenerEntries(eventName);
    const callRefs: number[] = [];
    for (const entry of entries) callRefs.push((table.siteIds.get(entry) ?? addSite(table, eventName, entry)) * 2);
    const plan: DispatchPlan = { table, entries, eventRef: -1 - (eventId(table, eventName) * 2 + (entries.length === 0 ? 1 : 0)), callRefs };
    // A trace of an older table (rare: one began before the table was replaced) gets a plan of its own.
    if (table === this.#table) this.#plans.set(eventName, plan);
    return plan;
  }

  /** Walks the path tree along the records not walked yet: requests down the same path end at the same node. */
  #path(trace: Trace): PathNode {
    // Refs of an older table mean other things in the current tree: such a trace (rare) shares nothing.
    if (trace.table !== this.#table) return newNode(trace.log.length / 3);
    if (trace.root !== this.#paths) trace.node = trace.root = this.#paths;
    const log = trace.log;
    let node = trace.node;
    for (let i = node.records * 3; i < log.length; i += 3) {
      const ref = log[i]!;
      node = (node.firstRef === ref ? node.firstChild : node.next?.get(ref)) ?? this.#addPathNode(node, ref);
    }
    trace.node = node;
    return node;
  }

  #addPathNode(parent: PathNode, ref: number): PathNode {
    const node = newNode(parent.records + 1);
    // Past the bound, unusual paths get nodes of their own: correct, just not shared.
    if (this.#pathNodes >= PATH_NODES_MAX) return node;
    this.#pathNodes++;
    if (parent.firstChild === undefined) {
      parent.firstRef = ref;
      parent.firstChild = node;
    } else {
      (parent.next ??= new Map()).set(ref, node);
    }
    return node;
  }

  #changed(): void {
    this.#paths = newNode(0);
    this.#pathNodes = 0;
    this.#plans.clear();
  }
}

function newTable(): TraceTable {
  return { sites: [], siteIds: new Map(), events: [], eventIds: new Map() };
}

function newNode(records: number): PathNode {
  return { records, firstRef: NaN, firstChild: undefined, next: undefined, notCalled: undefined, notCalledWhileRunning: undefined };
}

/**
 * Takes a finished listener's ref off `running`: the last occurrence, which is the top of the
 * stack unless async listeners of one request overlap (a listener that does not await another
 * dispatch it started).
 */
function removeRunning(running: number[], ref: number): void {
  const at = running.lastIndexOf(ref);
  if (at === running.length - 1) running.pop();
  else if (at >= 0) running.splice(at, 1);
}

function addSite(table: TraceTable, eventName: string, entry: ListenerEntry): number {
  const id = table.sites.length;
  table.sites.push(Object.freeze({ event: eventName, listener: entry.name, priority: entry.priority }));
  table.siteIds.set(entry, id);
  return id;
}

function stoppedBit(event: StoppableEvent): number {
  return event.propagationStopped === true ? 1 : 0;
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
