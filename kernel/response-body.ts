import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import { describeValue } from './describe-value.js';
import { isPlainObject } from './name-value-object.js';
import { Request } from './request.js';
import { requestInternals } from './request-internals.js';
import type { Response, ResponseBody } from './response.js';

// The kernel's own helpers for response bodies, for kernel/ and lib/ (not in index.ts): no part of the
// package's API, whose Response checks its body and whose servers destroy what they do not send.

/** Stream bodies prepare() dropped, by response (see discardedBody()). */
export const DISCARDED = new WeakMap<Response, Readable>();

/** Stream bodies the kernel dropped and destroyed within handle() (replaced or set by a listener), by main request (see droppedBodies()). */
export const DROPPED = new WeakMap<object, Readable[]>();

/**
 * What a sub-request's records (its dropped bodies, the stream bodies it hands back) are kept under: its main request, which
 * its server terminates (a sub-request is never terminated), or, when that cannot be known, its kernel (see takeUnownedBodies()).
 */
export const RECORD_OWNERS = new WeakMap<object, object>();

/** The stream bodies sub-requests handed back to the code that made them, by main request (see handBack()). */
const HANDED_BACK = new WeakMap<object, Set<Readable>>();

/** The byte lengths of the text or bytes bodies withoutHeadBody() took from HEADs' answers, by response (see headBodyLength()). */
export const HEAD_BODY_LENGTHS = new WeakMap<Response, number>();

/**
 * `body` when it is one a Response can carry (a string, bytes, a readable stream or null); else a
 * TypeError naming what it is. Plain JavaScript can put anything in a body, the constructor or later.
 */
export function checkResponseBody(body: unknown): ResponseBody {
  if (typeof body === 'string' || body === null || body instanceof Uint8Array || typeof (body as { pipe?: unknown } | undefined)?.pipe === 'function') return body as ResponseBody;
  throw new TypeError(`A response body is a string, bytes, a readable stream or null, not ${describeBody(body)}.`);
}

/** What a body of another kind is, with the call that makes one of it: Express's `res.send()` and Fetch's `Response` take some of them. */
function describeBody(body: unknown): string {
  if (typeof (body as { getReader?: unknown } | null)?.getReader === 'function') return 'a web ReadableStream: pass Readable.fromWeb(stream) of node:stream';
  if (typeof (body as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function') return 'an async iterable (an async generator): pass Readable.from(iterable) of node:stream';
  if (body instanceof ArrayBuffer) return 'an ArrayBuffer: pass new Uint8Array(buffer)';
  if (isPlainObject(body) || Array.isArray(body)) return `${describeValue(body)}: send JSON with Response.json(data)`;
  return describeValue(body);
}

/**
 * Empties the answer to a main HEAD request as Symfony's `prepare()` does, keeping its headers: the
 * Content-Length a GET would have had stays (the length of a text or bytes body, or one given with an
 * empty body; a stream's given, or none), a text or bytes body's length is kept for headBodyLength()
 * (where Transfer-Encoding keeps it out of the headers), and a stream body is destroyed and kept for discardedBody().
 */
export function withoutHeadBody(response: Response): void {
  const body = response.body;
  if (body === null) return;
  const headers = response.headers;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    // An empty one may be a HEAD controller's, whose GET's length nobody knows: RFC 9110 8.6 allows none, never a wrong one.
    if (length > 0) HEAD_BODY_LENGTHS.set(response, length);
    // A GET's text or bytes go with their own length, whatever Content-Length says (the server frames
    // them so), and so does the HEAD's: one lower-case header, for a `Content-Length` set by hand on the
    // record beside it would go out as a list of two, which no server sends. An empty body may carry the
    // GET's length (a HEAD controller's), as it does through the server.
    const given = Object.keys(headers).filter((name) => name.toLowerCase() === 'content-length');
    if (headers['transfer-encoding'] === undefined && (length > 0 || given.length === 0)) {
      for (const name of given) delete headers[name];
      headers['content-length'] = String(length);
    }
  } else {
    DISCARDED.set(response, body);
    destroyBody(body);
  }
  response.body = null;
}

/** Destroys a stream body the kernel drops within handling `request`, kept for droppedBodies() so that its server can say how it ended. */
export function dropBody(request: object, body: ResponseBody): void {
  if (body !== null && typeof body === 'object' && !(body instanceof Uint8Array)) {
    // A sub-request's under its main request: the sub-request is never terminated, and its server would never say how they ended.
    const owner = RECORD_OWNERS.get(request) ?? request;
    const dropped = DROPPED.get(owner);
    if (dropped === undefined) DROPPED.set(owner, [body]);
    else if (!dropped.includes(body)) dropped.push(body);
    // Heard, so that its failure is heard of even when it emits no 'close' (see onHeardFailure).
    hearBody(body);
    // One kept under the kernel waits for any request's terminate by its server, which a kernel driven by handle() alone never
    // has: one that closes without failing has nothing to say, and is let go of, as a handed-back one is (see handBack()).
    if (KERNEL_OWNERS.has(owner) && body instanceof EventEmitter) EventEmitter.prototype.once.call(body, 'close', () => letGoOfDropped(owner, body as Readable));
  }
  destroyBody(body);
  if (body !== null && typeof body === 'object' && !(body instanceof Uint8Array)) recordedLate(request);
}

/** The kernels some sub-request's records are kept under, its main request unknown (see RECORD_OWNERS). */
export const KERNEL_OWNERS = new WeakSet<object>();

/** The kernels a server of the package (or inject()) given a logger drives, which takes the records kept under them at its requests' terminate (see takeUnownedBodies()). */
const TAKEN_FROM = new WeakSet<object>();

/** `kernel`'s records (see takeUnownedBodies()) are taken by the server (or inject()) that calls this: it keeps them from now on. */
export function takesUnownedBodies(kernel: object): void {
  TAKEN_FROM.add(kernel);
}

/** Whether a server takes the records kept under `kernel`: one no server of the package drives would keep them for its lifetime, for nobody. */
export function keepsUnownedBodies(kernel: object): boolean {
  return TAKEN_FROM.has(kernel);
}

/** Takes a dropped body kept under `owner` (a kernel) out of its records once it has closed, when it did not fail. */
function letGoOfDropped(owner: object, body: Readable): void {
  if (body.errored !== null && body.errored !== undefined) return;
  const dropped = DROPPED.get(owner);
  const index = dropped === undefined ? -1 : dropped.indexOf(body);
  if (index < 0) return;
  dropped!.splice(index, 1);
  if (dropped!.length === 0) DROPPED.delete(owner);
}

/**
 * Keeps, under the sub-request's main request (RECORD_OWNERS), the stream body a sub-request hands back to the code that
 * made it: the kernel hears its 'error' for good, so one that code ignores or pipe()s (which does not listen to its source)
 * would fail unheard by anyone, where node ended the process before; its server logs such a failure (see failedUnheard()).
 * One that closes without such a failure is let go of (a main request may make sub-requests for hours).
 */
export function handBack(request: object, body: ResponseBody): void {
  if (body === null || typeof body !== 'object' || body instanceof Uint8Array || !('errored' in body)) return;
  const owner = RECORD_OWNERS.get(request) ?? request;
  let bodies = HANDED_BACK.get(owner);
  if (bodies === undefined) HANDED_BACK.set(owner, (bodies = new Set()));
  else if (bodies.has(body)) return;
  bodies.add(body);
  // A main request of another kernel may answer with it (see claimBody()); handed back again (a sub-request answering with another's), kept once, under its last owner.
  const before = HANDED_BACK_UNDER.get(body);
  if (before !== undefined && before !== owner) HANDED_BACK.get(before)?.delete(body);
  HANDED_BACK_UNDER.set(body, owner);
  const kept = bodies;
  const letGo = (): void => void (UNHEARD.has(body) || kept.delete(body));
  if (body instanceof EventEmitter) EventEmitter.prototype.once.call(body, 'close', letGo);
  recordedLate(request);
}

/**
 * Calls `said` with `request` whenever a record is kept under it from now on (a sub-request made once it has terminated, from a timer):
 * its server said how the records it had end at its terminate, and will not terminate it again. Kept in a field of the request, as every
 * request served gets one (GET /health too): `said` is made once by its server, and the request's terminate makes nothing.
 */
export function onLateRecords(request: Request, said: (request: Request) => void): void {
  requestInternals.setLateRecords(request, said);
}

/** Tells the server of the main request a record of `request` (a sub-request, or itself) is kept under that it came after its terminate. */
function recordedLate(request: object): void {
  const owner = RECORD_OWNERS.get(request) ?? request;
  // A kernel's records (see takeUnownedBodies()) are taken at any request's terminate.
  if (owner instanceof Request) requestInternals.lateRecords(owner)?.(owner);
}

/**
 * The main request's answer carries `body`, a sub-request's maybe: it is its server's to send and say how it ended, no longer handed back,
 * also when another request's terminate took it from the kernel's records already (see takeUnownedBodies()).
 */
export function claimBody(body: ResponseBody): void {
  if (body === null || typeof body !== 'object' || body instanceof Uint8Array) return;
  const owner = HANDED_BACK_UNDER.get(body);
  if (owner !== undefined) HANDED_BACK.get(owner)?.delete(body);
  TAKEN_UNCLAIMED.delete(body);
}

/** What each stream body a sub-request handed back is kept under (see handBack()): a main request of any kernel may answer with it. */
const HANDED_BACK_UNDER = new WeakMap<object, object>();

/**
 * The handed-back stream bodies takeUnownedBodies() took from a kernel's records that no main request has answered with since: without
 * request context, any request's terminate takes them, also while the main request that answers with one awaits a kernel.response listener.
 */
const TAKEN_UNCLAIMED = new WeakSet<object>();

/** Whether a stream body takeUnownedBodies() took as handed back has been claimed since (see claimBody()): its server says how it ends. */
export function claimedSinceTaken(body: object): boolean {
  return !TAKEN_UNCLAIMED.has(body);
}

/** The stream bodies sub-requests handed back while `request` was handled (see handBack()), for its server to say how they end. */
export function handedBackBodies(request: object): readonly Readable[] {
  const bodies = HANDED_BACK.get(request);
  return bodies === undefined ? NO_BODIES : [...bodies];
}

/** None: every request's terminate asks (see handedBackBodies()), and makes nothing when there are none. */
const NO_BODIES: readonly Readable[] = Object.freeze([]);

/**
 * The bodies kept under `kernel` (dropped within, or handed back by, sub-requests whose main request could not be known: no
 * request context, a sub-request made with Request.create()), taken out: its server says how they end, at any request's terminate.
 */
export function takeUnownedBodies(kernel: object): { dropped: readonly Readable[]; handedBack: readonly Readable[] } {
  const dropped = DROPPED.get(kernel);
  const handedBack = HANDED_BACK.get(kernel);
  // Every request's terminate asks: nothing to take, nothing made.
  if (dropped === undefined && handedBack === undefined) return NOTHING_UNOWNED;
  DROPPED.delete(kernel);
  HANDED_BACK.delete(kernel);
  if (handedBack !== undefined) for (const body of handedBack) TAKEN_UNCLAIMED.add(body);
  return { dropped: dropped ?? [], handedBack: handedBack === undefined ? [] : [...handedBack] };
}

const NOTHING_UNOWNED = Object.freeze({ dropped: Object.freeze([]), handedBack: Object.freeze([]) });

/** Destroys a stream body that will not be sent (its file or socket would stay open); other bodies, and a legacy stream (`pipe()` alone) with no destroy(), need nothing. */
export function destroyBody(body: ResponseBody): void {
  const destroy = body !== null && typeof body === 'object' ? (body as { destroy?: unknown }).destroy : undefined;
  if (typeof destroy === 'function') (body as Readable).destroy();
}

/** The stream bodies whose 'error' the kernel hears (see hearBody): one listener each, however often it is given. */
const HEARD = new WeakSet<object>();

/** Heard stream bodies whose 'error' the kernel heard, and those among them that failed with nobody but the kernel listening (see failedUnheard()). */
const FAILED = new WeakSet<object>();
const UNHEARD = new WeakSet<object>();

/** Who is told when a heard stream body fails (see onHeardFailure()). */
const FAILURE_WATCHERS = new WeakMap<object, () => void>();

/**
 * A stream body's error, heard and dropped: the stream keeps it in `errored`, which its server reads, or the server
 * listens already. One it does not keep (an `emit('error')` of the app's own) with nobody else listening is thrown on, as node would.
 */
function heardError(this: Readable, error: unknown): void {
  const alone = this.listenerCount('error') === 1;
  if (this.errored !== error && alone) throw error;
  FAILED.add(this);
  if (alone) UNHEARD.add(this);
  FAILURE_WATCHERS.get(this)?.();
}

/** Whether the heard stream body failed with nobody but the kernel listening: before the kernel heard it, node ended the process on it. */
export function failedUnheard(body: object): boolean {
  if (UNHEARD.has(body)) return true;
  // Destroyed with an error this turn, whose 'error' comes next tick: the code it was handed back to has had its turn (the main
  // request is terminating), and said so now it is in the main request's profile, which the profiler saves at once.
  const stream = body as Readable;
  return HEARD.has(body) && !FAILED.has(body) && stream.errored !== null && stream.errored !== undefined && EventEmitter.prototype.listenerCount.call(stream, 'error') === 1;
}

/**
 * Calls `watcher` when the heard stream body fails, after the kernel's hearer has (see failedUnheard()): a stream built with
 * `emitClose: false` says so by its 'error' alone. A listener of one's own would be heard as somebody listening. False when it is not heard.
 */
export function onHeardFailure(body: object, watcher: () => void): boolean {
  if (!HEARD.has(body)) return false;
  const before = FAILURE_WATCHERS.get(body);
  FAILURE_WATCHERS.set(body, before === undefined ? watcher : () => (before(), watcher()));
  return true;
}

/**
 * Hears the 'error' of a stream body from the moment the kernel is given it (a controller's answer, a
 * listener's setResponse(), the page handleException() gives): one destroyed with an error while the kernel
 * still holds it (before it was given back, or while an async kernel.response or kernel.exception listener
 * awaits I/O) emits it with nobody listening yet, the server listening only once handle() has settled,
 * which would end the process. Nothing is lost: a destroyed stream keeps its error in `errored`, and the
 * server and inject() fail the response with it. A legacy stream (no `errored`) is left as it is: its
 * 'error' is emitted from the app's own call, never later.
 */
export function hearBody(body: ResponseBody | undefined): void {
  if (body === null || typeof body !== 'object' || body instanceof Uint8Array || HEARD.has(body)) return;
  const stream = body as { errored?: unknown; on?: unknown };
  if (!('errored' in stream) || typeof stream.on !== 'function') return;
  HEARD.add(body);
  // Through EventEmitter's own on() when it is one (every node stream): a stream whose on() is its own (one that drops
  // 'error' listeners, or throws) would leave its error unheard, and the process ended on it.
  if (body instanceof EventEmitter) EventEmitter.prototype.on.call(body, 'error', heardError);
  else (body as Readable).on('error', heardError);
}
