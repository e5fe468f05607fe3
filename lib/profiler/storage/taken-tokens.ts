import { HEX_BYTES, generateToken, randomUint16 } from '../token.js';

/** Characters after the prefix that the bitmap covers: 6-character tokens (the default) behind a 2-character prefix. */
const BITMAP_SUFFIX_LENGTH = 4;
const BITMAP_SLOTS = 16 ** BITMAP_SUFFIX_LENGTH;

/**
 * The tokens of one lease's prefix not to draw. Tokens of the prefix's default length are bits of
 * a 65,536-bit map (8 KiB), so a draw is a random number and a bit test, and the string is made
 * only once it is free; a Set of tens of thousands of strings cost more per draw and per scan.
 * Tokens of other lengths (or not of the prefix) go to a Set, as before.
 */
export class TakenTokens {
  readonly prefix: string;
  readonly #bits = new Uint8Array(BITMAP_SLOTS / 8);
  #bitCount = 0;
  readonly #others = new Set<string>();

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  /** Tokens held, of every length. */
  get size(): number {
    return this.#bitCount + this.#others.size;
  }

  has(token: string): boolean {
    const slot = this.#slot(token);
    return slot < 0 ? this.#others.has(token) : (this.#bits[slot >>> 3]! & (1 << (slot & 7))) !== 0;
  }

  add(token: string): void {
    const slot = this.#slot(token);
    if (slot < 0) this.#others.add(token);
    else this.#set(slot);
  }

  delete(token: string): void {
    const slot = this.#slot(token);
    if (slot < 0) {
      this.#others.delete(token);
      return;
    }
    const mask = 1 << (slot & 7);
    if ((this.#bits[slot >>> 3]! & mask) === 0) return;
    this.#bits[slot >>> 3]! &= ~mask;
    this.#bitCount--;
  }

  /**
   * A random token of `length` characters with this prefix that is not held and that `busy`
   * refuses not, added before it is returned; null after `attempts` misses.
   */
  draw(length: number, attempts: number, busy: (token: string) => boolean): string | null {
    const bitmap = length === this.prefix.length + BITMAP_SUFFIX_LENGTH;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (!bitmap) {
        const token = this.prefix + generateToken(length - this.prefix.length);
        if (this.#others.has(token) || busy(token)) continue;
        this.#others.add(token);
        return token;
      }
      const slot = randomUint16();
      if ((this.#bits[slot >>> 3]! & (1 << (slot & 7))) !== 0) continue;
      const token = this.prefix + HEX_BYTES[slot >>> 8]! + HEX_BYTES[slot & 0xff]!;
      if (busy(token)) continue;
      this.#set(slot);
      return token;
    }
    return null;
  }

  #set(slot: number): void {
    const mask = 1 << (slot & 7);
    if ((this.#bits[slot >>> 3]! & mask) !== 0) return;
    this.#bits[slot >>> 3]! |= mask;
    this.#bitCount++;
  }

  /** The token's bit, or -1 when it belongs in the Set (another length, another prefix, not lowercase hex). */
  #slot(token: string): number {
    const prefix = this.prefix;
    if (token.length !== prefix.length + BITMAP_SUFFIX_LENGTH || !token.startsWith(prefix)) return -1;
    let slot = 0;
    for (let i = prefix.length; i < token.length; i++) {
      const code = token.charCodeAt(i);
      // 0-9, a-f only: anything else (upper case included) is not a token the bitmap could mean.
      const digit = code >= 0x30 && code <= 0x39 ? code - 0x30 : code >= 0x61 && code <= 0x66 ? code - 0x57 : -1;
      if (digit < 0) return -1;
      slot = slot * 16 + digit;
    }
    return slot;
  }
}
