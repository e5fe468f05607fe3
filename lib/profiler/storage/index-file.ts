// The index file: one JSON object per line, appended with a single O_APPEND write each, so lines
// from several processes never interleave; only a compaction (under the lock) rewrites it.
import { open, stat, type FileHandle } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ProfileSummary } from '../profile.js';
import { isStorableToken } from './validation.js';

/** One line of the index: a profile's summary and the size of its file. */
export interface IndexEntry extends ProfileSummary {
  bytes: number;
}

/** Longest line written; well under 4 KiB so one `write` appends it whole. URLs are cut to fit. */
export const MAX_INDEX_LINE_BYTES = 2048;
/** Longest ip and method kept in the index (real ones are far shorter). */
const MAX_SHORT_FIELD = 64;
/**
 * How every line starts. Inside a JSON string a quote is always escaped, so this text can only
 * appear where a line begins: after a torn line, the next line is found by searching for it.
 */
const LINE_START = '{"t":"';
const NEWLINE = 0x0a;
/** Appends retried this many times when a compaction keeps replacing the file under us. */
const APPEND_ATTEMPTS = 5;
/** How often an appender looks whether a compaction still holds the lock. */
const LOCK_POLL_MS = 5;
/** Longest an appender waits for a compaction (they take milliseconds; a frozen holder must not stall writes). */
const LOCK_WAIT_MS = 1_000;

/** The entry as the index keeps it: short fields capped, so what a process caches equals what it reads back. */
export function indexEntryOf(summary: ProfileSummary, bytes: number): IndexEntry {
  return {
    token: summary.token,
    parent: summary.parent,
    ip: summary.ip.slice(0, MAX_SHORT_FIELD),
    method: summary.method.slice(0, MAX_SHORT_FIELD),
    url: summary.url,
    time: summary.time,
    status: summary.status,
    bytes,
  };
}

/** The entry as one line, newline included, at most MAX_INDEX_LINE_BYTES (the URL is cut if needed). */
export function encodeIndexLine(entry: IndexEntry): string {
  const head =
    `${LINE_START}${entry.token}","ts":${entry.time},"s":${entry.status},"m":${JSON.stringify(entry.method.slice(0, MAX_SHORT_FIELD))},` +
    `"i":${JSON.stringify(entry.ip.slice(0, MAX_SHORT_FIELD))},"p":${JSON.stringify(entry.parent)},"b":${entry.bytes},"u":`;
  let url = entry.url;
  for (;;) {
    const line = `${head}${JSON.stringify(url)}}\n`;
    if (Buffer.byteLength(line) <= MAX_INDEX_LINE_BYTES) return line;
    url = url.slice(0, Math.floor(url.length * 0.8));
  }
}

/** The entry of one line (without its newline), or null when the line is not a valid entry. */
export function decodeIndexLine(line: string): IndexEntry | null {
  const entry = parseEntry(line);
  if (entry !== null) return entry;
  // A line torn by a crash has the next line glued to its end: keep that one.
  const start = line.lastIndexOf(LINE_START);
  return start > 0 ? parseEntry(line.slice(start)) : null;
}

function parseEntry(text: string): IndexEntry | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null) return null;
  const { t, ts, s, m, i, p, b, u } = raw as Record<string, unknown>;
  if (
    !isStorableToken(t) ||
    typeof ts !== 'number' ||
    !Number.isFinite(ts) ||
    !Number.isInteger(s) ||
    typeof m !== 'string' ||
    typeof i !== 'string' ||
    !(p === null || isStorableToken(p)) ||
    typeof b !== 'number' ||
    typeof u !== 'string'
  ) {
    return null;
  }
  return { token: t, parent: p, ip: i, method: m, url: u, time: ts, status: s as number, bytes: b };
}

/** What a read of the index found. */
export interface IndexChunk {
  entries: IndexEntry[];
  /** Offset just past the last complete line read; a partial last line is left for the next read. */
  end: number;
  /** Complete lines that were not valid entries (torn by a crash). */
  skipped: number;
}

/** Reads the complete lines from `offset` to the end of the open index file. */
export async function readIndexFrom(handle: FileHandle, offset: number, knownSize?: number): Promise<IndexChunk> {
  const size = knownSize ?? (await handle.stat()).size;
  if (size <= offset) return { entries: [], end: offset, skipped: 0 };
  const buffer = Buffer.allocUnsafe(size - offset);
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, offset + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  const data = buffer.subarray(0, filled);
  const last = data.lastIndexOf(NEWLINE);
  if (last < 0) return { entries: [], end: offset, skipped: 0 };
  const entries: IndexEntry[] = [];
  let skipped = 0;
  for (const line of data.toString('utf8', 0, last).split('\n')) {
    if (line === '') continue;
    const entry = decodeIndexLine(line);
    if (entry === null) skipped++;
    else entries.push(entry);
  }
  return { entries, end: offset + last + 1, skipped };
}

/** How an appender cooperates with compactions. */
export interface AppendOptions {
  /** The compaction lock; while a live holder has it, the appender waits before checking. */
  lockPath: string;
  lockStaleMs: number;
  /** The profile the line is for: once it is gone (a compaction dropped it), the line is not appended again. */
  profilePath: string;
}

/**
 * Appends one line with a single O_APPEND write, and returns once the line is in the current
 * index. A compaction (another process, under the lock) reads the file, renames a rewritten one
 * over it, then copies over the lines appended to the old file meanwhile. So after writing: while
 * the lock is held by a live holder, wait (a little); then, if the path no longer names the file written to,
 * append again (a duplicate line is harmless: readers keep the first). A compaction that takes
 * the lock after our check reads the file after our write, line included. The compaction itself
 * appends without options: it holds the lock and nobody replaces the file under it.
 */
export async function appendIndexLine(path: string, line: string, options?: AppendOptions): Promise<void> {
  const data = Buffer.from(line);
  for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
    const handle = await open(path, 'a');
    let written;
    try {
      const { bytesWritten } = await handle.write(data, 0, data.length);
      if (bytesWritten !== data.length) throw new Error(`Short write to ${path} (${bytesWritten} of ${data.length} bytes): is the disk full?`);
      written = await handle.stat();
    } finally {
      await handle.close();
    }
    if (options === undefined) return;
    await waitWhileLocked(options.lockPath, options.lockStaleMs);
    const current = await stat(path).catch(() => null);
    if (current !== null && current.ino === written.ino && current.dev === written.dev) return;
    if ((await stat(options.profilePath).catch(() => null)) === null) return;
  }
  throw new Error(`The profiler index ${path} was replaced ${APPEND_ATTEMPTS} times while appending to it.`);
}

/**
 * Waits until the lock file is gone or stale, at most LOCK_WAIT_MS. Only visibility depends on
 * this wait, not durability: a compaction still running copies our line from the old file after
 * its rename, and a dead holder never renames at all.
 */
async function waitWhileLocked(lockPath: string, staleMs: number): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const lock = await stat(lockPath).catch(() => null);
    if (lock === null || Date.now() - lock.mtimeMs >= staleMs || Date.now() >= deadline) return;
    await sleep(LOCK_POLL_MS);
  }
}
