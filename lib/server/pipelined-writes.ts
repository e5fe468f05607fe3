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
 * Most bytes held back on one connection: past them, what is held goes out at once with the chunk
 * that passed them, whose write then completes as the socket completes it (its back-pressure is the
 * socket's, as without gathering). A pipelined burst of small responses stays well within it.
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

/** One connection's held-back writes, and its own Writable methods, which write them out. */
class Gatherer {
  #on = false;
  #chunks: Chunk[] = [];
  #bytes = 0;

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

  get on(): boolean {
    return this.#on;
  }

  /** Holds `chunks` back, or writes them with what is held when that passes GATHER_LIMIT (`callback` then the socket's). */
  hold(chunks: readonly Chunk[], callback: WriteCallback): void {
    for (const entry of chunks) {
      this.#chunks.push({ chunk: entry.chunk, encoding: entry.encoding });
      this.#bytes += entry.chunk.length;
    }
    if (this.#bytes <= GATHER_LIMIT) return callback();
    this.flush(callback);
  }

  /** Writes out what is held (one write), and holds nothing more this turn. */
  flush(callback?: WriteCallback): void {
    this.#on = false;
    holding.delete(this);
    const chunks = this.#chunks;
    if (chunks.length === 0) return callback?.();
    this.#chunks = [];
    this.#bytes = 0;
    // Their writes have completed as far as the responses know: a failure now is the connection's.
    this.writev.call(this.socket, chunks, callback ?? this.#failed);
  }

  readonly #failed = (error?: Error | null): void => {
    if (error) this.socket.destroy(error);
  };
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

/** Puts a Gatherer between the socket's Writable and its own write methods (once per connection). */
function wrap(socket: GatheringSocket): Gatherer {
  const { _write: write, _writev: writev, _final: final, _destroy: destroy } = socket;
  const held = new Gatherer(socket, write, writev);
  socket[gatherer] = held;
  socket._write = function (chunk, encoding, callback) {
    if (held.on) held.hold([{ chunk, encoding }], callback);
    else write.call(this, chunk, encoding, callback);
  };
  socket._writev = function (chunks, callback) {
    if (held.on) held.hold(chunks, callback);
    else writev.call(this, chunks, callback);
  };
  // The connection's end (node's FIN after a `Connection: close` response) and its destruction come after what is held.
  socket._final = function (callback) {
    held.flush();
    final.call(this, callback);
  };
  socket._destroy = function (error, callback) {
    if (held.on) held.flush();
    destroy.call(this, error, callback);
  };
  return held;
}
