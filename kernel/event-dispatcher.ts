import { describeMisdeclaredSubscriber, describeValue } from './describe-value.js';
import type { KernelEventMap } from './events.js';
import { isNameValueObject } from './name-value-object.js';

/** Anything dispatched: an object that may be stopped (see {@link Event}). */
export interface StoppableEvent {
  readonly propagationStopped?: boolean;
}

/** A listener: called with the event; may return a promise, which the dispatcher then awaits. */
export type Listener<E = any> = (event: E, eventName: string, dispatcher: EventDispatcher) => unknown;

/** What a listener of `eventName` is called with: the kernel's event class for a kernel event (see KernelEventMap), any event for another name. */
export type EventOf<N extends string> = N extends keyof KernelEventMap ? KernelEventMap[N] : any;

/** What a subscriber declares per event: a method name, `[method, priority]`, or a list of those. */
export type Subscription = string | readonly [string, number?] | ReadonlyArray<readonly [string, number?]>;

/** An object that declares its own listeners, Symfony style: `{ [eventName]: 'method' | ['method', priority] }`. */
export interface EventSubscriber {
  getSubscribedEvents(): Record<string, Subscription>;
}

/** A registered listener with what the profiler needs to name it. */
export interface ListenerEntry {
  readonly listener: Listener;
  readonly priority: number;
  /** `Class::method` for subscribers, the function's name otherwise. */
  readonly name: string;
  /** The subscriber that declared it, if any (used by removeSubscriber). */
  readonly subscriber?: EventSubscriber;
}

/**
 * The prioritized listener registry: higher priority first, equal priority in
 * registration order, `stopPropagation()` ends a dispatch. A dispatch stays
 * synchronous until a listener returns a promise.
 */
export class EventDispatcher {
  readonly #entries = new Map<string, ListenerEntry[]>();
  readonly #sorted = new Map<string, readonly ListenerEntry[]>();

  /**
   * Registers a listener; `name` is what the profiler shows (defaults to the function name). A
   * listener of a kernel event is typed with its event class (`KernelEvents.VIEW`: a ViewEvent).
   */
  addListener<N extends string>(eventName: N, listener: Listener<EventOf<N>>, priority = 0, name?: string): void {
    // Refused here rather than at every dispatch, where it would make each request a 500.
    if (typeof eventName !== 'string') throw new TypeError(`An event name is a string, not ${describeValue(eventName)}.`);
    if (typeof listener !== 'function') throw new TypeError(`A listener of "${eventName}" is a function, not ${describeValue(listener)}.`);
    const entry = { listener, priority, name: name ?? (listener.name || 'closure') };
    checkPriority(eventName, priority, entry.name);
    this.#add(eventName, entry);
  }

  /** Removes every registration of `listener` for the event. */
  removeListener(eventName: string, listener: Listener): void {
    const entries = this.#entries.get(eventName);
    if (!entries) return;
    const kept = entries.filter((entry) => entry.listener !== listener);
    this.#replace(eventName, kept);
  }

  /** Registers each listener a subscriber declares. */
  addSubscriber(subscriber: EventSubscriber): void {
    if (typeof subscriber?.getSubscribedEvents !== 'function') {
      const described = describeMisdeclaredSubscriber(subscriber) ?? `${describeValue(subscriber)}${typeof subscriber === 'object' && subscriber !== null ? ' without one' : ''}`;
      throw new TypeError(`A subscriber is an object with a getSubscribedEvents() method, not ${described}.`);
    }
    // A class given rather than an instance (its getSubscribedEvents() static, as in Symfony) is named by its own name, not "Function".
    const isClass = typeof subscriber === 'function';
    const className = isClass ? (subscriber as Function).name || 'subscriber' : subscriber.constructor?.name && subscriber.constructor !== Object ? subscriber.constructor.name : 'subscriber';
    const events: unknown = subscriber.getSubscribedEvents();
    // A list would be read by its indexes, as subscriptions to events "0", "1"... naming its entries' methods; a Map as none.
    if (!isNameValueObject(events)) {
      throw new TypeError(`${className}'s getSubscribedEvents() gives an object of event names ({ 'app.saved': 'onSaved' }), not ${describeValue(events)}.`);
    }
    // Everything is checked before anything is added: a refused subscriber leaves no listener behind.
    const added: Array<[string, ListenerEntry]> = [];
    for (const [eventName, subscription] of Object.entries(events as Record<string, Subscription>)) {
      for (const [method, priority = 0] of normalizeSubscription(subscription, eventName, className)) {
        const fn = (subscriber as unknown as Record<string, unknown>)[method];
        if (typeof fn !== 'function') {
          const prototype = isClass ? (subscriber as unknown as { prototype?: Record<string, unknown> }).prototype : undefined;
          const onInstances = typeof prototype?.[method] === 'function';
          // Symfony's shape (getSubscribedEvents() static): an instance would be refused for lacking it, so both changes are named.
          const staticToo = onInstances && typeof prototype?.getSubscribedEvents !== 'function' ? ', with getSubscribedEvents() an instance method (drop `static`)' : '';
          throw new TypeError(`${className} subscribes "${method}" to "${eventName}", but has no such method${onInstances ? `: its instances have, so pass one (new ${className}()) rather than the class${staticToo}` : ''}.`);
        }
        checkPriority(eventName, priority, `${className}::${method}`);
        added.push([eventName, { listener: fn.bind(subscriber) as Listener, priority, name: `${className}::${method}`, subscriber }]);
      }
    }
    for (const [eventName, entry] of added) this.#add(eventName, entry);
  }

  /** Removes every listener a subscriber declared. */
  removeSubscriber(subscriber: EventSubscriber): void {
    for (const [eventName, entries] of this.#entries) {
      this.#replace(eventName, entries.filter((entry) => entry.subscriber !== subscriber));
    }
  }

  /** The listeners of one event in call order, or of all events by name. */
  getListeners(eventName: string): Listener[];
  getListeners(): Record<string, Listener[]>;
  getListeners(eventName?: string): Listener[] | Record<string, Listener[]> {
    if (eventName !== undefined) return this.getListenerEntries(eventName).map((entry) => entry.listener);
    const all: Record<string, Listener[]> = {};
    // Defined, not assigned: an event named "__proto__" would otherwise set the object's prototype rather than add its key.
    for (const name of this.#entries.keys()) Object.defineProperty(all, name, { value: this.getListeners(name), enumerable: true, writable: true, configurable: true });
    return all;
  }

  /** The registered entries of one event in call order (cached until the registry changes). */
  getListenerEntries(eventName: string): readonly ListenerEntry[] {
    let sorted = this.#sorted.get(eventName);
    if (sorted === undefined) {
      const entries = this.#entries.get(eventName);
      if (entries === undefined) {
        // Checked on this first look only: dispatch(event) with no name (Symfony's would use the event's class) would reach no listener, silently.
        if (typeof eventName !== 'string') throw new TypeError(`An event name is a string, not ${describeValue(eventName)}: dispatch(event, 'order.placed') takes it second.`);
        // An event nobody listens to is remembered as such (the kernel dispatches some on every request),
        // up to a bound: names made per entity or per request would otherwise pile up.
        if (this.#sorted.size < MAX_SORTED) this.#sorted.set(eventName, NO_ENTRIES);
        return NO_ENTRIES;
      }
      // Array.prototype.sort is stable, so equal priorities keep registration order.
      sorted = [...entries].sort((a, b) => b.priority - a.priority);
      this.#sorted.set(eventName, sorted);
    }
    return sorted;
  }

  /** The names of the events that have listeners. */
  getEventNames(): string[] {
    // #replace() drops an event whose last listener goes: every name kept has some.
    return [...this.#entries.keys()];
  }

  /** The priority a listener was registered with, or null when it is not registered. */
  getListenerPriority(eventName: string, listener: Listener): number | null {
    return this.#entries.get(eventName)?.find((entry) => entry.listener === listener)?.priority ?? null;
  }

  /** Whether an event (or any event) has listeners. */
  hasListeners(eventName?: string): boolean {
    if (eventName !== undefined) return (this.#entries.get(eventName)?.length ?? 0) > 0;
    return this.getEventNames().length > 0;
  }

  /**
   * Calls the event's listeners in order until one stops propagation.
   * Returns the event itself, or a promise of it once a listener returned a promise.
   */
  dispatch<E extends StoppableEvent>(event: E, eventName: string): E | Promise<E> {
    const entries = this.#sorted.get(eventName) ?? this.getListenerEntries(eventName);
    for (let i = 0; i < entries.length; i++) {
      if (event.propagationStopped === true) break;
      const result = entries[i]!.listener(event, eventName, this);
      if (isPromiseLike(result)) return this.#dispatchRest(result, entries, i + 1, event, eventName);
    }
    return event;
  }

  async #dispatchRest<E extends StoppableEvent>(
    pending: PromiseLike<unknown>,
    entries: readonly ListenerEntry[],
    from: number,
    event: E,
    eventName: string,
  ): Promise<E> {
    await pending;
    for (let i = from; i < entries.length; i++) {
      if (event.propagationStopped === true) break;
      const result = entries[i]!.listener(event, eventName, this);
      if (isPromiseLike(result)) await result;
    }
    return event;
  }

  #add(eventName: string, entry: ListenerEntry): void {
    const entries = this.#entries.get(eventName);
    if (entries) entries.push(entry);
    else this.#entries.set(eventName, [entry]);
    this.#sorted.delete(eventName);
  }

  #replace(eventName: string, entries: ListenerEntry[]): void {
    if (entries.length === 0) this.#entries.delete(eventName);
    else this.#entries.set(eventName, entries);
    this.#sorted.delete(eventName);
  }
}

const NO_ENTRIES: readonly ListenerEntry[] = Object.freeze([]);
/** Most event names whose call order is kept; past it, names nobody listens to are looked up each time. */
const MAX_SORTED = 1024;

/** True for promises and other thenables. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function';
}

/** A priority must order: NaN compares as equal to everything, which would scramble the order of the other listeners too. */
function checkPriority(eventName: string, priority: unknown, name: string): void {
  if (typeof priority !== 'number' || Number.isNaN(priority)) {
    throw new TypeError(`The priority of listener "${name}" for "${eventName}" must be a number, got ${typeof priority === 'number' ? 'NaN' : JSON.stringify(priority) ?? String(priority)}.`);
  }
}

/** A subscription as a list of `[method, priority?]`; a TypeError naming the subscriber for any other shape (a bare string inside a list would be read as its characters). */
function normalizeSubscription(subscription: Subscription, eventName: string, className: string): Array<readonly [string, number?]> {
  if (typeof subscription === 'string') return [[subscription]];
  const list: unknown = subscription;
  if (Array.isArray(list)) {
    if (typeof list[0] === 'string') return [list as unknown as readonly [string, number?]];
    if (list.every((item: unknown) => Array.isArray(item) && typeof item[0] === 'string')) return [...(list as ReadonlyArray<readonly [string, number?]>)];
  }
  throw new TypeError(`${className} subscribes to "${eventName}" with ${describeValue(subscription)}: a subscription is 'method', ['method', priority] or a list of ['method', priority?].`);
}
