// Responses to pipelined requests, written together. node:http writes each response with a system
// call of its own, the next one only once the one before it has finished (a tick later): ten
// requests pipelined in one read cost ten writes, each of which wakes the client. Once a request
// comes pipelined behind another, its connection's writes are gathered until the event loop's
// check phase of the same turn, then go out in one write: the same bytes, in the same order, a
// few microseconds later. Connections that do not pipeline are never touched.

import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** What node's Writable hands `_writev`: chunks with their encodings. */
type Chunk = { chunk: Buffer | string; encoding: BufferEncoding | 'buffer' };
type WriteCallback = (error?: Error | null) => void;

/** The Writable implementation's own methods, as net.Socket (and tls.TLSSocket) have them. */
interface SocketWrites {
  _write(chunk: Buffer | string, encoding: BufferEncoding | 'buffer', callback: WriteCallback): void;
  _writev(chunks: Chunk[], callback: WriteCallback): void;
  _final(callback: WriteCallback): void;
  _destroy(error: Error | null, callback: (error?: Error | null) => void): void;
}

/**
 * Most bytes of one connection whose writes have completed as far as its writers know, while they
 * are held or on their way out (written in the check phase, not yet taken by the system): past them,
 * a write goes out with what is held and completes as the socket completes it, so its back-pressure
 * is the socket's, as without gathering. A pipelined burst of small responses stays well within it.
 */
export const GATHER_LIMIT = 64 * 1024;

const gatherer = Symbol('gatherer');
type GatheringSocket = Socket & SocketWrites & { [gatherer]?: Gatherer };

/** Connections with writes held back, written out once in the check phase. */
const holding = new Set<Gatherer>();
let flushScheduled = false;

function flushAll(): void {
  flushScheduled = false;
  for (const held of holding) held.flush();
  holding.clear();
}

/**
 * The bytes a chunk takes on the wire: a string's in its encoding (a UTF-8 body's characters may be
 * 3 bytes each, counted as 1 they let thrice the limit be held), a buffer's its length. node:http
 * writes a response's head in latin1, a byte a character: counted without asking Buffer.
 */
function byteLength({ chunk, encoding }: Chunk): number {
  if (typeof chunk !== 'string') return chunk.length;
  return encoding === 'latin1' ? chunk.length : Buffer.byteLength(chunk, encoding as BufferEncoding);
}

/** A write for the socket's own methods: `callback` is its writer's, none for what was held (completed already). */
interface Outgoing {
  chunks: readonly Chunk[];
  bytes: number;
  callback: WriteCallback | undefined;
}

/**
 * One connection's held-back writes, and its own Writable methods, which write them out. Every
 * write reaches those methods through it, one at a time, in the order the Writable handed them
 * over: a write of held chunks is one the Writable does not know is under way, and node's TLS
 * socket aborts the process on a second write before the first is out.
 */
class Gatherer {
  #on = false;
  #chunks: Chunk[] = [];
  #bytes = 0;
  /** Bytes written with no writer waiting on them (held, then written in the check phase), not yet out. */
  #unaccounted = 0;
  #writing = false;
  /** Writes waiting for the one under way, in the order they came. */
  readonly #queue: Outgoing[] = [];
  /** Called once nothing is being written or waiting (the connection's end waits for them). */
  #whenWritten: Array<() => void> = [];

  constructor(
    readonly socket: GatheringSocket,
    readonly write: SocketWrites['_write'],
    readonly writev: SocketWrites['_writev'],
  ) {}

  /** Holds this turn's writes back until its check phase. */
  start(): void {
    if (this.#on) return;
    this.#on = true;
    holding.add(this);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flushAll);
    }
  }

  /** What the socket's `_write` and `_writev` are handed: held this turn, otherwise written in turn. */
  take(chunks: readonly Chunk[], callback: WriteCallback): void {
    if (this.#on) return this.#hold(chunks, callback);
    this.#send({ chunks, bytes: 0, callback });
  }

  /**
   * Holds `chunks` back, completed at once; past GATHER_LIMIT (with what was written so and is not
   * out yet: a client that reads nothing), writes them with what is held, `callback` then the socket's.
   */
  #hold(chunks: readonly Chunk[], callback: WriteCallback): void {
    for (const entry of chunks) {
      this.#chunks.push({ chunk: entry.chunk, encoding: entry.encoding });
      this.#bytes += byteLength(entry);
    }
    if (this.#unaccounted + this.#bytes <= GATHER_LIMIT) return callback();
    this.flush(callback);
  }

  /** Writes out what is held (one write, after the one under way), and holds nothing more this turn. */
  flush(callback?: WriteCallback): void {
    this.#on = false;
    holding.delete(this);
    const chunks = this.#chunks;
    if (chunks.length === 0) return callback?.();
    const bytes = this.#bytes;
    this.#chunks = [];
    this.#bytes = 0;
    // Completed already as far as the responses know: they count against the limit until they are out.
    if (callback === undefined) this.#unaccounted += bytes;
    this.#send({ chunks, bytes, callback });
  }

  /** Whether writes its writers take for done are held, or not yet out (a client that reads nothing): node:http's answers are not all sent. */
  get sending(): boolean {
    return this.#bytes > 0 || this.#unaccounted > 0;
  }

  /** Calls `then` once every write handed to the socket has gone out (or failed). */
  afterWrites(then: () => void): void {
    if (this.#writing) this.#whenWritten.push(then);
    else then();
  }

  #send(outgoing: Outgoing): void {
    if (this.#writing) return void this.#queue.push(outgoing);
    this.#writing = true;
    const done = (error?: Error | null): void => this.#sent(outgoing, error);
    const { chunks } = outgoing;
    if (chunks.length === 1) this.write.call(this.socket, chunks[0]!.chunk, chunks[0]!.encoding, done);
    else this.writev.call(this.socket, chunks as Chunk[], done);
  }

  #sent(outgoing: Outgoing, error: Error | null | undefined): void {
    this.#writing = false;
    if (outgoing.callback === undefined) this.#unaccounted -= outgoing.bytes;
    // The next write goes out before this one's writer hears of it: one it then hands over comes after.
    const next = this.#queue.shift();
    if (next !== undefined) this.#send(next);
    else if (this.#whenWritten.length > 0) {
      const waiting = this.#whenWritten;
      this.#whenWritten = [];
      for (const then of waiting) then();
    }
    if (outgoing.callback !== undefined) outgoing.callback(error);
    // A failure of what the responses took for written is the connection's.
    else if (error) this.socket.destroy(error);
  }
}

/**
 * Gathers the connection's writes until the check phase of this event-loop turn, once it has
 * pipelined: called for each request handed to the listener, `pipelined` when it came behind one
 * not answered yet (its response has no socket yet). From then on the first answer of each burst
 * waits for the others too (a connection that has pipelined once is likely to again); one that
 * never has is not touched.
 */
export function gatherPipelinedWrites(duplex: Duplex, pipelined: boolean): void {
  const socket = duplex as GatheringSocket;
  const held = socket[gatherer];
  if (held !== undefined) held.start();
  else if (pipelined) wrap(socket).start();
}

/**
 * Whether answers node:http has finished with are still held, or on their way out, on the
 * connection: the connection is not idle between requests (a keep-alive close would cut them).
 */
export function sendsGathered(duplex: Duplex): boolean {
  return (duplex as GatheringSocket)[gatherer]?.sending ?? false;
}

/** Puts a Gatherer between the socket's Writable and its own write methods (once per connection). */
function wrap(socket: GatheringSocket): Gatherer {
  const { _write: write, _writev: writev, _final: final, _destroy: destroy } = socket;
  const held = new Gatherer(socket, write, writev);
  socket[gatherer] = held;
  socket._write = function (chunk, encoding, callback) {
    held.take([{ chunk, encoding }], callback);
  };
  socket._writev = function (chunks, callback) {
    held.take(chunks, callback);
  };
  // The connection's end (node's FIN after a `Connection: close` response) comes after what is held, once it is out.
  socket._final = function (callback) {
    held.flush();
    held.afterWrites(() => final.call(this, callback));
  };
  // Its destruction after what is held too (what is still queued then fails with the socket).
  socket._destroy = function (error, callback) {
    held.flush();
    destroy.call(this, error, callback);
  };
  return held;
}
