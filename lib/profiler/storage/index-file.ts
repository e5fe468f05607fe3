// The index file: one JSON object per line, appended in batches with a single O_APPEND write each,
// so lines from several processes never interleave; only a compaction (under the lock) rewrites it.
import { closeSync, fstatSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FileLock } from '../../fs/file-lock.js';
import { jsonString, jsonStringOrNull } from '../json.js';
import type { ProfileSummary } from '../profile.js';
import { shortWriteError } from './fs-errors.js';
import { isStorableToken } from './validation.js';

/** One line of the index: a profile's summary and where its bytes are. */
export interface IndexEntry extends ProfileSummary {
  /** Bytes of the profile's record in its segment (or of its file, in the old layout). */
  bytes: number;
  /** The segment file holding the profile, or null for a profile file of the old layout (`<aa>/<token>.json.gz`). */
  segment: string | null;
  /** Byte offset of the record in its segment (0 in the old layout). */
  offset: number;
}

/** An entry with the exact line it was read from or written as (no newline): a compaction writes it back as is. */
export interface IndexRecord extends IndexEntry {
  readonly line: string;
}

/** Which file a reader or appender had open: a compaction replaces the index with a new file. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/** Names of segment files: base-36 creation time, pid, random hex; never shared by two writers. */
export const SEGMENT_NAME = /^[0-9a-z]{1,12}-[0-9]{1,10}-[0-9a-f]{8}\.ndjson$/;
/** Longest line written; URLs are cut to fit. */
export const MAX_INDEX_LINE_BYTES = 2048;
/** Longest ip and method kept in the index (real ones are far shorter). */
const MAX_SHORT_FIELD = 64;
/**
 * How every entry line starts. Inside a JSON string a quote is always escaped, so this text can
 * only appear where a line begins: after a torn line, the next line is found by searching for it.
 */
const LINE_START = '{"t":"';
/** How the header line of a compacted index starts (never confused with an entry). */
const HEADER_START = '{"h":';
const NEWLINE = 0x0a;
/** How often an appender looks whether a compaction still holds the lock. */
const LOCK_POLL_MS = 5;
/** Longest an appender waits for a compaction (they take milliseconds; a frozen holder must not stall writes). */
const LOCK_WAIT_MS = 1_000;

/** The entry as the index keeps it: short fields capped, so what a process caches equals what it reads back. */
export function indexEntryOf(summary: ProfileSummary, bytes: number, segment: string | null, offset: number): IndexEntry {
  return {
    token: summary.token,
    parent: summary.parent,
    ip: summary.ip.slice(0, MAX_SHORT_FIELD),
    method: summary.method.slice(0, MAX_SHORT_FIELD),
    url: summary.url,
    time: summary.time,
    status: summary.status,
    bytes,
    segment,
    offset,
  };
}

/** The entry as one line, newline included, at most MAX_INDEX_LINE_BYTES (the URL is cut if needed). */
export function encodeIndexLine(entry: IndexEntry): string {
  return `${indexLine(entry)}\n`;
}

/**
 * The JSON of the fields a batch's lines usually share (a server's entries differ mostly by token,
 * time, bytes and offset), from the last line made: a line is then a template of a few pieces
 * instead of a dozen, with no escaping check of unchanged strings.
 */
const shared = {
  status: NaN,
  method: '',
  ip: '',
  parent: null as string | null,
  /** `,"s":…,"m":…,"i":…,"p":…,"b":` */
  middle: '',
  segment: null as string | null,
  /** `"g":"…","o":` */
  where: '',
  /** Null until a line is made: an empty URL first would otherwise have kept the empty tail, and made a line no reader decodes. */
  url: null as string | null,
  /** `"u":…}` */
  tail: '',
};

/** The URL the line last made by indexLine() holds when it had to cut it, else null (rare: a module variable, not an object per line). */
let cutUrl: string | null = null;

/** The entry's line without its newline (see encodeIndexLine). */
function indexLine(entry: IndexEntry): string {
  if (entry.status !== shared.status || entry.method !== shared.method || entry.ip !== shared.ip || entry.parent !== shared.parent) {
    shared.middle = `,"s":${entry.status},"m":${jsonString(entry.method.slice(0, MAX_SHORT_FIELD))},"i":${jsonString(entry.ip.slice(0, MAX_SHORT_FIELD))},"p":${jsonStringOrNull(entry.parent)},"b":`;
    shared.status = entry.status;
    shared.method = entry.method;
    shared.ip = entry.ip;
    shared.parent = entry.parent;
  }
  if (entry.segment !== shared.segment) {
    shared.where = entry.segment === null ? '' : `"g":"${entry.segment}","o":`;
    shared.segment = entry.segment;
  }
  if (entry.url !== shared.url) {
    shared.tail = `"u":${jsonString(entry.url)}}`;
    shared.url = entry.url;
  }
  const where = entry.segment === null ? '' : `${shared.where}${entry.offset},`;
  const line = `${LINE_START}${entry.token}","ts":${entry.time}${shared.middle}${entry.bytes},${where}${shared.tail}`;
  cutUrl = null;
  // + 1: the newline.
  return line.length + 1 <= MAX_INDEX_LINE_BYTES / 3 ? line : cappedIndexLine(entry);
}

/** The entry's line with its URL cut until the line fits in MAX_INDEX_LINE_BYTES. */
function cappedIndexLine(entry: IndexEntry): string {
  const where = entry.segment === null ? '' : `"g":"${entry.segment}","o":${entry.offset},`;
  const head =
    `${LINE_START}${entry.token}","ts":${entry.time},"s":${entry.status},"m":${jsonString(entry.method.slice(0, MAX_SHORT_FIELD))},` +
    `"i":${jsonString(entry.ip.slice(0, MAX_SHORT_FIELD))},"p":${jsonStringOrNull(entry.parent)},"b":${entry.bytes},${where}"u":`;
  let url = entry.url;
  for (;;) {
    const line = `${head}${jsonString(url)}}`;
    // + 1: the newline.
    if (Buffer.byteLength(line) + 1 <= MAX_INDEX_LINE_BYTES) {
      if (url !== entry.url) cutUrl = url;
      return line;
    }
    url = url.slice(0, Math.floor(url.length * 0.8));
  }
}

/**
 * The record as the index keeps it, its line included (see recordLines); the same shape as a parsed
 * line's, with the URL the line holds: cut, when it was, as every other process and a restart read it.
 */
function recordOf(entry: IndexEntry, line: string, url: string): IndexRecord {
  const { token, parent, ip, method, time, status, bytes, segment, offset } = entry;
  return { token, parent, ip, method, url, time, status, bytes, segment, offset, line };
}

/**
 * The records of a batch of entries, and their lines as one string (newlines included). Each
 * record's line is a slice of that one flat string: a line built piece by piece is a tree of
 * string fragments, and the index keeps its records (10,000 by default) long enough for the
 * garbage collector to copy and trace every fragment of every line.
 */
export function recordLines(entries: readonly IndexEntry[]): { records: IndexRecord[]; lines: string } {
  const lines: string[] = [];
  // The entries whose line cut the URL, and the URL kept: few or none.
  let cut: Map<number, string> | undefined;
  for (let i = 0; i < entries.length; i++) {
    lines.push(indexLine(entries[i] as IndexEntry));
    if (cutUrl !== null) (cut ??= new Map()).set(i, cutUrl);
  }
  const text = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
  const records: IndexRecord[] = [];
  let at = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as IndexEntry;
    const length = (lines[i] as string).length;
    records.push(recordOf(entry, text.slice(at, at + length), cut?.get(i) ?? entry.url));
    at += length + 1;
  }
  return { records, lines: text };
}

/** The `droppedThrough` of a purge's header: every profile written before it was dropped. */
export const PURGED_THROUGH = 8.64e15;

/** What a compaction dropped from the newest end of the index (see droppedNewest in retention.ts). */
export interface DroppedNewest {
  /** Profiles dated at or after this (epoch ms) that it no longer lists were dropped for being dated ahead; null: none. */
  aheadFrom: number | null;
  /** Profiles of more bytes than this that it no longer lists were dropped for being alone over the byte bound; null: none. */
  overBytes: number | null;
}

/** Nothing dropped from the newest end. */
export const NONE_DROPPED_NEWEST: Readonly<DroppedNewest> = Object.freeze({ aheadFrom: null, overBytes: null });

/**
 * The header line a compaction starts the index with: entries up to `droppedThrough` (epoch ms)
 * were dropped by it, and none newer than `droppedEver` was ever dropped from this index (null:
 * none). A record no line refers to, newer than that, lost its line (see FileStorage's recovery).
 * `newest` ("a" and "x") says what it dropped from the newest end, which `droppedThrough` does not
 * cover: a writer checking which of its lines a compaction dropped needs both. Earlier versions read
 * the header's "d" and "k" only, and ignore the rest.
 */
export function encodeIndexHeader(droppedThrough: number | null, droppedEver: number | null, newest: Readonly<DroppedNewest> = NONE_DROPPED_NEWEST): string {
  const json = (value: number | null): string => (value === null ? 'null' : String(value));
  return `${HEADER_START}1,"d":${json(droppedThrough)},"k":${json(droppedEver)},"a":${json(newest.aheadFrom)},"x":${json(newest.overBytes)}}\n`;
}

/** What a header line says (see encodeIndexHeader); `droppedEver` undefined for a header written before it was recorded. */
export interface IndexHeader extends DroppedNewest {
  droppedThrough: number | null;
  droppedEver: number | null | undefined;
}

/** The header a line is, or undefined for any other line. A header of an earlier version says nothing of the newest end (null). */
export function decodeIndexHeader(line: string): IndexHeader | undefined {
  if (!line.startsWith(HEADER_START)) return undefined;
  try {
    const { d, k, a, x } = JSON.parse(line) as { d?: unknown; k?: unknown; a?: unknown; x?: unknown };
    const time = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
    return { droppedThrough: time(d), droppedEver: k === undefined ? undefined : time(k), aheadFrom: time(a), overBytes: time(x) };
  } catch {
    return undefined;
  }
}

/** The token a line starts with, without parsing it (a torn line may still hold another entry after it). */
export function leadingToken(line: string): string | undefined {
  if (!line.startsWith(LINE_START)) return undefined;
  const end = line.indexOf('"', LINE_START.length);
  return end < 0 ? undefined : line.slice(LINE_START.length, end);
}

/** The record of one line (without its newline), or null when the line is not a valid entry. */
export function decodeIndexLine(line: string): IndexRecord | null {
  const record = parseRecord(line);
  if (record !== null) return record;
  // A line torn by a crash has the next line glued to its end: keep that one.
  const start = line.lastIndexOf(LINE_START);
  return start > 0 ? parseRecord(line.slice(start)) : null;
}

function parseRecord(text: string): IndexRecord | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null) return null;
  const { t, ts, s, m, i, p, b, u, g, o } = raw as Record<string, unknown>;
  if (
    !isStorableToken(t) ||
    typeof ts !== 'number' ||
    !Number.isFinite(ts) ||
    !Number.isInteger(s) ||
    typeof m !== 'string' ||
    typeof i !== 'string' ||
    !(p === null || isStorableToken(p)) ||
    !Number.isSafeInteger(b) ||
    (b as number) < 0 ||
    typeof u !== 'string'
  ) {
    return null;
  }
  // The segment name becomes a path: only names of the exact shape we write.
  if (g === undefined ? o !== undefined : typeof g !== 'string' || !SEGMENT_NAME.test(g) || !Number.isSafeInteger(o) || (o as number) < 0) return null;
  const segment = g === undefined ? null : (g as string);
  return { token: t, parent: p, ip: i, method: m, url: u, time: ts, status: s as number, bytes: b as number, segment, offset: (o as number | undefined) ?? 0, line: text };
}

/** The complete lines of a read of the index. */
export interface IndexLines {
  /** Without their newlines; empty lines left out. */
  lines: string[];
  /** Offset just past the last complete line read; a partial last line is left for the next read. */
  end: number;
}

/**
 * Reads the complete lines from `offset` to the end of the open index file (a file descriptor or
 * FileHandle). Synchronous, as every file operation on the save path (see FileStorage.writeMany):
 * a local file in the page cache answers in microseconds, where each asynchronous step waits for
 * a turn of a busy event loop.
 */
export function readIndexLines(file: FileHandle | number, offset: number, knownSize?: number): IndexLines {
  const fd = typeof file === 'number' ? file : file.fd;
  const size = knownSize ?? fstatSync(fd).size;
  if (size <= offset) return { lines: [], end: offset };
  const buffer = Buffer.allocUnsafe(size - offset);
  let filled = 0;
  while (filled < buffer.length) {
    const bytesRead = readSync(fd, buffer, filled, buffer.length - filled, offset + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  const last = buffer.subarray(0, filled).lastIndexOf(NEWLINE);
  if (last < 0) return { lines: [], end: offset };
  const lines = buffer.toString('utf8', 0, last).split('\n');
  return { lines: lines.filter((line) => line !== ''), end: offset + last + 1 };
}

/**
 * Appends whole lines with a single O_APPEND write (one `write` of a regular file is not
 * interleaved with other appenders' on a local filesystem), and returns the identity of the file
 * written to: when a compaction replaced it meanwhile, the caller checks its lines made it over.
 * A short write (disk full) rejects; the torn tail it may leave is skipped by readers.
 */
/** Bytes gathered before each write of writeIndexFile. */
const WRITE_CHUNK_BYTES = 64 * 1024;

/**
 * Writes a whole index (its header, then each record's line) to `fd` from its start, in chunks;
 * returns the bytes written. A compaction rewrites 10,000 lines by default: joined into one string
 * they would be megabytes allocated straight into the garbage collector's old generation, at every
 * compaction.
 */
export function writeIndexFile(fd: number, header: string, records: readonly IndexRecord[]): number {
  const chunk = Buffer.allocUnsafe(WRITE_CHUNK_BYTES);
  let used = chunk.write(header, 0, 'utf8');
  let total = 0;
  const flush = (): void => {
    for (let written = 0; written < used; ) {
      const bytesWritten = writeSync(fd, chunk, written, used - written, total + written);
      if (bytesWritten === 0) throw shortWriteError(`Short write of the profiler index (${total + written} bytes written): is the disk full?`);
      written += bytesWritten;
    }
    total += used;
    used = 0;
  };
  for (const record of records) {
    // A line is at most MAX_INDEX_LINE_BYTES, newline included.
    if (used + MAX_INDEX_LINE_BYTES > WRITE_CHUNK_BYTES) flush();
    used += chunk.write(record.line, used, 'utf8');
    chunk[used++] = NEWLINE;
  }
  flush();
  return total;
}

export function appendIndexLines(path: string, data: Buffer): FileIdentity & { size: number } {
  const fd = openSync(path, 'a');
  try {
    const bytesWritten = writeSync(fd, data, 0, data.length);
    if (bytesWritten !== data.length) throw shortWriteError(`Short write to ${path} (${bytesWritten} of ${data.length} bytes): is the disk full?`);
    const { dev, ino, size } = fstatSync(fd);
    return { dev, ino, size };
  } finally {
    closeSync(fd);
  }
}

/** Whether `path` still names the file `identity` (false when it is gone). */
export function isCurrentFile(path: string, identity: FileIdentity): boolean {
  let current;
  try {
    current = statSync(path);
  } catch {
    return false;
  }
  return current.ino === identity.ino && current.dev === identity.dev;
}

/**
 * Waits until the lock file is gone, stale or left by a holder that is gone, at most LOCK_WAIT_MS.
 * Only visibility depends on this wait, not durability: a compaction still running copies
 * appended lines from the old file after its rename, and a dead holder never renames at all, so
 * its lock (kill -9 in the middle of a compaction) is not waited for: each batch waited the whole
 * second for it, and a busy server dropped profiles until a compaction took it over.
 */
export async function waitWhileLocked(lock: FileLock): Promise<void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    let stats;
    try {
      stats = statSync(lock.path);
    } catch {
      return;
    }
    if (Date.now() - stats.mtimeMs >= lock.staleMs || Date.now() >= deadline) return;
    if (!(await lock.heldByAnother())) return;
    await sleep(LOCK_POLL_MS);
  }
}
