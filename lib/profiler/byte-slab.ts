/** Size of each shared buffer: about a hundred typical profiles. */
const SLAB_BYTES = 256 * 1024;
/** Texts that may need more than this many bytes get a buffer of their own. */
const LARGEST_SHARED = SLAB_BYTES / 8;
/** Emptied buffers kept for reuse. */
const SPARES = 8;

/**
 * Copies texts as UTF-8 into large shared buffers, outside the JavaScript heap, and reuses each
 * buffer once every copy in it is released.
 *
 * A profile waits for its batch (tens of milliseconds) after it is serialised. Kept as a string,
 * it outlives the young generation's collections: the garbage collector copies it, then
 * promotes it to the old generation, where it dies and brings the next full collection closer.
 * Copied here at once, the string dies young and the bytes cost the collector nothing. Reuse
 * matters as much: V8 counts every new buffer as external memory, and allocating the profiles'
 * megabytes a second afresh would start full collections of its own.
 */
export class ByteSlab {
  #current: Buffer | null = null;
  #used = 0;
  /** Shared buffer -> copies in it not released yet. */
  readonly #live = new Map<ArrayBufferLike, number>();
  readonly #spares: Buffer[] = [];

  /** The text's UTF-8 bytes, valid until release(). */
  copy(text: string): Buffer {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8.
    const most = text.length * 3;
    if (most > LARGEST_SHARED) return Buffer.from(text, 'utf8');
    let buffer = this.#current;
    if (buffer === null || this.#used + most > SLAB_BYTES) {
      if (buffer !== null) this.#retire(buffer);
      buffer = this.#current = this.#spares.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES);
      this.#used = 0;
      this.#live.set(buffer.buffer, 0);
    }
    const start = this.#used;
    this.#used += buffer.write(text, start, 'utf8');
    this.#live.set(buffer.buffer, (this.#live.get(buffer.buffer) as number) + 1);
    return buffer.subarray(start, this.#used);
  }

  /** Gives a copy back: its bytes may be overwritten from now on. Copies not made here are ignored. */
  release(bytes: Buffer): void {
    const count = this.#live.get(bytes.buffer);
    if (count === undefined) return;
    this.#live.set(bytes.buffer, count - 1);
    if (count === 1 && bytes.buffer !== this.#current?.buffer) this.#recycle(bytes.buffer);
  }

  /** Shared buffers in use (for tests). */
  get buffersInUse(): number {
    return this.#live.size;
  }

  /** The current buffer is full: it is reused once its last copy is released. */
  #retire(buffer: Buffer): void {
    if (this.#live.get(buffer.buffer) === 0) this.#recycle(buffer.buffer);
  }

  #recycle(arrayBuffer: ArrayBufferLike): void {
    this.#live.delete(arrayBuffer);
    if (this.#spares.length < SPARES) this.#spares.push(Buffer.from(arrayBuffer, 0, SLAB_BYTES));
  }
}
