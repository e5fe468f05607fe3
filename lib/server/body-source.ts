import { Transform, finished, type Readable } from 'node:stream';
import { ResponseBodyDestroyedError } from '../../kernel/index.js';
import { chunkTypeError } from './response-framing.js';

/** The errors stream bodies failed their sources with themselves, no reader gone before: see isBodyFailure. */
const ownFailures = new WeakSet<object>();

/**
 * Whether the pipe of a stream body failed with the body's own error (see bodySource), which is never
 * its client leaving, whatever its code: a proxied upstream response cut fails with node's ECONNRESET.
 */
export function isBodyFailure(error: unknown): boolean {
  return typeof error === 'object' && error !== null && ownFailures.has(error);
}

/**
 * A stream body as the source of the pipe to the client (the server's and inject()'s), ending with
 * the body's last chunk. A failure before it fails the source, so the pipe cuts the answer; one
 * after it, in the body's clean-up (a file whose close fails), goes to `cleanupFailed` alone: the
 * answer is whole by then, and pipeline() would destroy every stream of the pipe with it, cutting
 * the response to a client still reading. Destroying the source destroys the body, with its error, as pipeline() does.
 */
export function bodySource(body: Readable, cleanupFailed: (error: Error) => void, failOnDestroy = false): Readable {
  const objectMode = body.readableObjectMode === true;
  // Whether a chunk has gone on: a body destroyed after it cut an answer its head began.
  let begun = false;
  // One chunk held at a time in object mode, as ChunkTypeGuard holds: a generator's pieces may be megabytes each.
  // Each chunk pushed as it is: a PassThrough drops an `undefined` one, which ChunkTypeGuard (and
  // inject()'s reader) must see to refuse it, as node:http's write() would.
  // A legacy stream's (`pipe()` alone) pipe writes whatever it emits as 'data' (`undefined`, an object):
  // the source takes any chunk, one at a time, and fails with what cannot be sent, as ChunkTypeGuard does,
  // rather than throw it out of the stream's own emit().
  const legacy = typeof body.readableLength !== 'number';
  const source = new Transform({
    ...(objectMode ? { objectMode, highWaterMark: 1 } : legacy ? { writableObjectMode: true, writableHighWaterMark: 1 } : {}),
    transform(chunk: unknown, _encoding, callback): void {
      const refused = legacy ? chunkTypeError(chunk) : undefined;
      if (refused !== undefined) {
        ownFailures.add(refused);
        return callback(refused);
      }
      begun = true;
      this.push(chunk);
      callback();
    },
  });
  // A null its pipe writes is refused by write() itself, even in object mode (a TypeError thrown out of the
  // stream's own emit(), the answer left hanging): failed as any other chunk that cannot be sent.
  if (legacy) {
    const write = source.write as (...args: unknown[]) => boolean;
    source.write = function (this: Transform, ...args: unknown[]): boolean {
      if (args[0] !== null) return write.apply(this, args);
      const refused = chunkTypeError(null)!;
      ownFailures.add(refused);
      this.destroy(refused);
      return false;
    } as Transform['write'];
  }
  // A legacy stream (`pipe()` alone) has no readableEnded: its 'end' says it, heard before the pipe hears it.
  let endHeard = false;
  body.once('end', () => {
    endHeard = true;
  });
  const ended = (): boolean => endHeard || body.readableEnded === true;
  finished(body, { writable: false }, (error) => {
    // A reader leaving has destroyed the source first, and the body with its error: no failure of the body's.
    if (ended() || source.destroyed) return;
    // A close before its end is the body's own destroy() without an error: named, it is no reader
    // gone, and is logged. finished() reports a legacy stream's (`pipe()` alone) 'close' with no 'end' before it as no error at all.
    const failure: unknown = error === undefined || error === null || (error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE' ? new ResponseBodyDestroyedError(begun) : error;
    if (typeof failure === 'object' && failure !== null) ownFailures.add(failure);
    source.destroy(failure as Error);
  });
  body.on('error', (error) => {
    if (ended()) cleanupFailed(error);
  });
  source.once('close', () => {
    // A legacy stream may have no destroy(); one that ended whole is not destroyed, as pipeline() leaves it.
    if (!ended() && typeof body.destroy === 'function') body.destroy(source.errored ?? undefined);
  });
  if (failOnDestroy && !legacy) failAtDestroy(body, source, () => begun);
  body.pipe(source);
  return source;
}

/**
 * Fails `source` once `body` (a Readable) is destroyed before its end, with the error it was destroyed
 * with (set from the call on, see `errored`) or a ResponseBodyDestroyedError, rather than when it says so:
 * a destroy whose clean-up never calls back emits neither its error nor 'close', nor does one without an
 * error of a body that emits no 'close' (emitClose: false). inject()'s: its response timeout would find
 * such a body only when it passes (never when it is off), and its timer keeps no process alive. Its `_destroy` is
 * watched for as long as the source lives.
 */
function failAtDestroy(body: Readable, source: Readable, begun: () => boolean): void {
  const stream = body as Readable & { _destroy: (error: Error | null, callback: (error?: Error | null) => void) => void };
  const own = Object.hasOwn(stream, '_destroy') ? stream._destroy : undefined;
  const destroy = stream._destroy;
  const watched = function (this: Readable, error: Error | null, callback: (error?: Error | null) => void): void {
    // A tick on, once the body's own destroy() has run: the source is not destroyed from within it.
    process.nextTick(() => {
      if (source.destroyed || body.readableEnded) return;
      const failure: unknown = body.errored ?? new ResponseBodyDestroyedError(begun());
      if (typeof failure === 'object' && failure !== null) ownFailures.add(failure);
      source.destroy(failure as Error);
    });
    return destroy.call(this, error, callback);
  };
  // One that cannot be replaced (read-only, a frozen stream's) is left to say its destroy itself, as to the server:
  // the assignment threw out of inject(), the body never read nor destroyed, the request never terminated.
  try {
    stream._destroy = watched;
  } catch {
    return;
  }
  source.once('close', () => {
    // One the application assigned meanwhile is its own to keep: only the watch is taken away.
    if (stream._destroy !== watched) return;
    if (own === undefined) delete (stream as { _destroy?: unknown })._destroy;
    else stream._destroy = own;
  });
}
