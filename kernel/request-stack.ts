import { AsyncLocalStorage } from 'node:async_hooks';
import type { Request } from './request.js';

/** The stack outside any request. */
const NO_REQUESTS: readonly Request[] = Object.freeze([]);

/** How a RequestStack tracks the current request. */
export interface RequestStackOptions {
  /**
   * Follow the current request across awaits with AsyncLocalStorage (default true). Off, `run()`
   * only calls its function and the getters answer undefined: listeners still get their request
   * from the event. Node 20 runs AsyncLocalStorage's hooks on every async resource once a store
   * is in use, which costs a server 6-10% of its throughput (README, Benchmarks); createKernel turns it on in debug mode.
   */
  asyncContext?: boolean;
}

/**
 * The requests being handled, main request first. Each `run()` opens its own async
 * context holding the caller's stack plus the new request, so concurrent main
 * requests (and even concurrent sub-requests of one request) never see each other.
 */
export class RequestStack {
  readonly #storage: AsyncLocalStorage<readonly Request[]> | null;

  constructor(options: RequestStackOptions = {}) {
    this.#storage = options.asyncContext === false ? null : new AsyncLocalStorage<readonly Request[]>();
  }

  /** Whether the current request is tracked across awaits (see RequestStackOptions). */
  get tracksAsyncContext(): boolean {
    return this.#storage !== null;
  }

  /** Runs `fn` with `request` on top of the current stack (alone, outside any request). */
  run<T>(request: Request, fn: () => T): T {
    if (this.#storage === null) return fn();
    const parent = this.#storage.getStore();
    return this.#storage.run(parent === undefined ? [request] : [...parent, request], fn);
  }

  /**
   * `fn` made to run, wherever and however late it is called, with the stack current now: the
   * request stays current in work Node starts outside the request (a stream read by the server
   * after handle() returned). `fn` itself outside any request or without tracking.
   */
  bind<This, Args extends unknown[], Result>(fn: (this: This, ...args: Args) => Result): (this: This, ...args: Args) => Result {
    const storage = this.#storage;
    const stack = storage?.getStore();
    if (storage === null || stack === undefined) return fn;
    return function (this: This, ...args: Args): Result {
      return storage.run(stack, Reflect.apply, fn, this, args) as Result;
    };
  }

  /** Runs `fn` outside any request: for work of the process that a request merely starts (what it logs, and what it starts, carry no request). */
  exit<T>(fn: () => T): T {
    // An empty stack rather than AsyncLocalStorage.exit(), experimental in Node 20 and toggling its hooks each time.
    return this.#storage === null ? fn() : this.#storage.run(NO_REQUESTS, fn);
  }

  /**
   * Stops tracking, for good: the AsyncLocalStorage is disabled, which Node requires before it can be
   * garbage collected. Until then every async resource the process creates carries a store of each
   * such storage, so a test suite making an app per test made each promise heavier per app made
   * (300 apps closed: 25 KB a promise). Call it once no request of this stack is handled any more
   * (`app.close()` does); `run()` would track again, and the getters answer undefined meanwhile.
   */
  close(): void {
    this.#storage?.disable();
  }

  /** The requests of the current context, main request first. */
  all(): readonly Request[] {
    return this.#storage?.getStore() ?? NO_REQUESTS;
  }

  /** The request being handled right now (a sub-request while one runs). */
  getCurrentRequest(): Request | undefined {
    const stack = this.#storage?.getStore();
    return stack === undefined ? undefined : stack[stack.length - 1];
  }

  /** The request the client sent. */
  getMainRequest(): Request | undefined {
    return this.#storage?.getStore()?.[0];
  }

  /** The request that made the current sub-request, if any. */
  getParentRequest(): Request | undefined {
    const stack = this.#storage?.getStore();
    return stack === undefined || stack.length < 2 ? undefined : stack[stack.length - 2];
  }
}
