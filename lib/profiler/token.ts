import { randomFillSync } from 'node:crypto';
import type { ProfilerStorage } from './storage/profiler-storage.js';
import { describeValue } from '../../kernel/describe-value.js';

/** Claims made at the same time while refilling the pool. */
const REFILL_CONCURRENCY = 8;

/** Default token length: 6 lowercase hex characters, as in Symfony. */
export const DEFAULT_TOKEN_LENGTH = 6;

/** The token lengths the storages keep and the profiler's pages open. */
export const MIN_TOKEN_LENGTH = 6;
export const MAX_TOKEN_LENGTH = 32;

const TOKEN_PATTERN = new RegExp(`^[0-9a-f]{${MIN_TOKEN_LENGTH},${MAX_TOKEN_LENGTH}}$`);

/** Whether `length` is a token length the storages keep and the pages open: a whole number from 6 to 32. */
export function isTokenLength(length: unknown): length is number {
  return Number.isInteger(length) && (length as number) >= MIN_TOKEN_LENGTH && (length as number) <= MAX_TOKEN_LENGTH;
}

/** Whether a string has the shape of a profile token (checked before any storage look-up). */
export function isValidToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

/** Random bytes drawn 4 KiB at a time: one crypto call per ~1,300 tokens instead of one per token. */
const entropy = Buffer.alloc(4096);
let entropyUsed = entropy.length;

/** Each byte as two lowercase hex characters: a look-up per byte costs a fraction of Buffer's toString('hex') call. */
export const HEX_BYTES: readonly string[] = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** The offset of `bytes` unread random bytes in `entropy`, refilling it from the CSPRNG when it runs short. */
function takeEntropy(bytes: number): number {
  if (entropyUsed + bytes > entropy.length) {
    randomFillSync(entropy);
    entropyUsed = 0;
  }
  const at = entropyUsed;
  entropyUsed += bytes;
  return at;
}

/** A random token of `length` lowercase hex characters (from the CSPRNG). */
export function generateToken(length = DEFAULT_TOKEN_LENGTH): string {
  const bytes = Math.ceil(length / 2);
  const at = takeEntropy(bytes);
  let token = '';
  for (let i = 0; i < bytes; i++) token += HEX_BYTES[entropy[at + i]!];
  return token.length === length ? token : token.slice(0, length);
}

/** A random number from 0 to 65,535 (from the CSPRNG), from the same pool as the tokens. */
export function randomUint16(): number {
  const at = takeEntropy(2);
  return (entropy[at]! << 8) | entropy[at + 1]!;
}

/**
 * Most tokens a TokenPool keeps ahead: a whole lease's worth at the default length (16^4 under one
 * two-character prefix). Each is claimed from the storage, out of every other process's reach, until
 * used or given back; an unbounded size (Infinity) would refill without end and block the thread.
 */
export const MAX_POOL_SIZE = 65_536;

/**
 * A token kept this long (ms, monotonic) is given back, not handed out: drawn from a lease another
 * process takes over once its holder has been frozen (SIGSTOP, a debugger) for 2 minutes without a
 * refresh, it may be drawn there too. TokenLeases draws from a lease only within a minute of
 * finding it its own; the pool kept up to 256 tokens drawn before a freeze, and handed them out after.
 */
export const POOLED_TOKEN_TRUST_MS = 60_000;

/** How long after a failed refill take() starts no other. */
const REFILL_RETRY_MS = 5_000;

/**
 * Tokens claimed from the storage ahead of time, so a request takes a unique token
 * without waiting for I/O. A taken token is drawn again, never shared or overwritten.
 */
export class TokenPool {
  readonly #storage: ProfilerStorage;
  readonly #length: number;
  readonly #size: number;
  readonly #ready: string[] = [];
  /** When (performance.now()) each token of #ready was drawn: oldest first, as they are. */
  readonly #readyAt: number[] = [];
  /** claim() calls waiting for the bulk draw in progress; null: it brought none, draw your own. */
  readonly #waiters: ((token: string | null) => void)[] = [];
  #refilling: Promise<void> | null = null;
  #closed = false;
  /** When (performance.now()) a refill last failed. */
  #failedAt = -Infinity;
  /** The first refill, started by the constructor; settles (never rejects) once it is done or failed. */
  readonly #first: Promise<void>;

  constructor(storage: ProfilerStorage, options: { length?: number; size?: number } = {}) {
    const length = options.length ?? DEFAULT_TOKEN_LENGTH;
    // Tokens of another length would be recorded in no storage and opened by no page (a 404 behind every X-Debug-Token-Link).
    if (!isTokenLength(length)) throw new TypeError(`A token length is a whole number of hex characters from ${MIN_TOKEN_LENGTH} to ${MAX_TOKEN_LENGTH}, not ${describeValue(length)}.`);
    const size = options.size ?? 256;
    if (!Number.isInteger(size) || size < 0 || size > MAX_POOL_SIZE) {
      throw new TypeError(`A token pool's size is a whole number of tokens from 0 (none kept ahead) to ${MAX_POOL_SIZE}, not ${describeValue(size)}.`);
    }
    this.#storage = storage;
    this.#length = length;
    this.#size = size;
    this.#first = this.#refill();
  }

  /**
   * Resolves once the first tokens are claimed (or the storage failed to give any): a request that
   * comes before finds the pool empty and waits for a token, its listeners after the profiler's
   * running asynchronously, so an error thrown there has a shorter stack trace.
   */
  ready(): Promise<void> {
    return this.#first;
  }

  /** A claimed token now, or null when the pool is empty (then use `claim()`). Refills in the background. */
  take(): string | null {
    const now = performance.now();
    // The oldest first: most takes compare one number.
    if (this.#readyAt.length > 0 && this.#readyAt[0]! < now - POOLED_TOKEN_TRUST_MS) this.#giveBackOlderThan(now - POOLED_TOKEN_TRUST_MS);
    const token = this.#ready.pop() ?? null;
    this.#readyAt.pop();
    // A storage that just failed to give tokens (a full disk) is not asked again by every request.
    if (this.#ready.length < this.#size / 2 && now - this.#failedAt >= REFILL_RETRY_MS) void this.#refill();
    return token;
  }

  /** Gives back, in the background, the tokens drawn before `since` (see POOLED_TOKEN_TRUST_MS). */
  #giveBackOlderThan(since: number): void {
    let count = 0;
    while (count < this.#readyAt.length && this.#readyAt[count]! < since) count++;
    this.#readyAt.splice(0, count);
    for (const token of this.#ready.splice(0, count)) void this.#storage.release(token).catch(() => {});
  }

  #push(token: string): void {
    this.#ready.push(token);
    this.#readyAt.push(performance.now());
  }

  /**
   * Claims one token when the pool is empty. With a storage that draws in bulk, it waits for the
   * next bulk draw (started now if none runs): when requests outrun the refills, a call to the
   * storage per request is what it costs otherwise (a message to a ThreadedFileStorage's worker
   * and back, each). Else, or when the bulk draw fails, the storage's own drawToken, or random
   * draws through claim(), again on each collision.
   */
  async claim(): Promise<string> {
    if (this.#storage.drawTokens !== undefined && !this.#closed) {
      const token = await new Promise<string | null>((resolve) => {
        this.#waiters.push(resolve);
        void this.#refill();
      });
      if (token !== null) return token;
    }
    if (this.#storage.drawToken !== undefined) return this.#storage.drawToken(this.#length);
    for (let attempt = 0; attempt < 100; attempt++) {
      const token = generateToken(this.#length);
      if (await this.#storage.claim(token)) return token;
    }
    throw new Error(`Could not claim a free ${this.#length}-character profile token after 100 draws: the storage is full or failing.`);
  }

  /** Gives the unused claimed tokens back to the storage. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#releaseWaiters();
    await this.#refilling?.catch(() => {});
    const unused = this.#ready.splice(0);
    this.#readyAt.length = 0;
    await Promise.all(unused.map((token) => this.#storage.release(token).catch(() => {})));
  }

  /** Lets the waiting claim() calls draw their own tokens. */
  #releaseWaiters(): void {
    for (const waiter of this.#waiters.splice(0)) waiter(null);
  }

  #refill(): Promise<void> {
    if (this.#refilling !== null || this.#closed) return this.#refilling ?? Promise.resolve();
    const storage = this.#storage;
    let refill: Promise<unknown>;
    if (storage.drawTokens !== undefined) {
      // One call for the lot: a promise per token is what a refill cost otherwise.
      refill = (async () => {
        while (!this.#closed && this.#ready.length < this.#size + this.#waiters.length) {
          for (const token of await storage.drawTokens!(this.#length, this.#size + this.#waiters.length - this.#ready.length)) {
            const waiter = this.#waiters.shift();
            if (waiter === undefined) this.#push(token);
            else waiter(token);
          }
        }
      })();
    } else {
      // A few claims at a time: each may be a round trip to the storage (a file creation for a claim outside a lease).
      const worker = async (): Promise<void> => {
        while (!this.#closed && this.#ready.length < this.#size) this.#push(await this.claim());
      };
      refill = Promise.all(Array.from({ length: REFILL_CONCURRENCY }, worker));
    }
    this.#refilling = refill
      .then(() => {}, () => {
        // The storage is failing; requests fall back to claim(), whose error the profiler logs.
        this.#failedAt = performance.now();
      })
      .finally(() => {
        this.#refilling = null;
        // Still waiting: the draw failed, or the pool closed. They draw their own.
        this.#releaseWaiters();
      });
    return this.#refilling;
  }
}
