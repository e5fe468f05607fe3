import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, rmSync, writevSync } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_DIRECTORY, makeDirectorySync } from '../../fs/make-directory.js';
import { errorCode, ignoreMissing, removeFile, shortWriteError } from './fs-errors.js';
import { SEGMENT_NAME } from './index-file.js';

/** The folder of the segment files, inside the storage's directory. */
const SEGMENT_DIR = 'segments';
/** A segment is rolled over once this old, so expired profiles free their segment soon after they expire. */
const SEGMENT_MAX_AGE_MS = 10 * 60_000;
/** A segment not written for this long is rolled over before the next write (see SEGMENT_STALE_MS). */
const SEGMENT_IDLE_MS = 60_000;
/**
 * Another writer's segment, referred to by no index line and not written for this long, is
 * deleted: its writer is dead, or rolled it over (writers roll over idle segments after a minute).
 * Writers delete their own rolled-over segments themselves, as soon as no line refers to them.
 */
const SEGMENT_STALE_MS = 5 * 60_000;

/** The segment file this writer appends its batches to. */
export interface Segment {
  readonly name: string;
  /** Open for writing; the segment's file operations are synchronous, as all on the save path. */
  readonly fd: number;
  /** Bytes written: the offset of the next record. */
  size: number;
  /** Records written. */
  records: number;
  readonly openedAt: number;
  writtenAt: number;
}

/** Whether an index line refers to the segment of this name. */
export type RefersTo = (name: string) => boolean;

/**
 * The segment files of one writer (a FileStorage instance) in `<dir>/segments/`: the one it
 * appends to, rolled over at `maxBytes` or `maxRecords`, 10 minutes of age or 1 of idleness, and those it rolled
 * over, deleted once no index line refers to them. Files of other writers are only read, and
 * deleted when unreferenced and stale (their writer is gone). What counts as referred to is the
 * caller's index; when deleting is safe (under the index lock) is the caller's to know.
 */
export class SegmentFiles {
  readonly #dir: string;
  #maxBytes: number;
  #maxRecords: number;
  #current: Segment | null = null;
  /** This writer's rolled-over segments not deleted yet. */
  readonly #retired = new Set<string>();

  constructor(dir: string, maxBytes: number, maxRecords = Infinity) {
    this.#dir = join(dir, SEGMENT_DIR);
    this.#maxBytes = maxBytes;
    this.#maxRecords = maxRecords;
  }

  /** Rolls segments over at these sizes from now on (the storage's bounds were lowered: a full disk). */
  limit(maxBytes: number, maxRecords: number): void {
    this.#maxBytes = maxBytes;
    this.#maxRecords = maxRecords;
  }

  /** The name of the segment being written, or null. */
  get currentName(): string | null {
    return this.#current?.name ?? null;
  }

  /** The current segment, or a new one when there is none, it is full (bytes or records), old or idle, or a purge deleted it. */
  writable(): Segment {
    const now = Date.now();
    const current = this.#current;
    if (current !== null) {
      const done = current.size >= this.#maxBytes || current.records >= this.#maxRecords || now - current.openedAt >= SEGMENT_MAX_AGE_MS || now - current.writtenAt >= SEGMENT_IDLE_MS;
      if (!done && isLinked(current.fd)) return current;
      this.retire(current);
    }
    const name = `${now.toString(36)}-${process.pid}-${randomBytes(4).toString('hex')}.ndjson`;
    const path = this.path(name);
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      makeDirectorySync(this.#dir, PRIVATE_DIRECTORY);
      fd = openSync(path, 'wx');
    }
    this.#current = { name, fd, size: 0, records: 0, openedAt: now, writtenAt: now };
    return this.#current;
  }

  /**
   * Writes `size` bytes of `parts`, `records` records, at the segment's end with one positional write. Synchronous:
   * one write of a batch into the page cache (about a millisecond for 1,000 profiles) instead of
   * a loop turn per step, which under load made a batch take ~0.5 s and the queue overflow. A
   * short write (libuv retries partial ones itself) means the disk is full. On failure the
   * segment is retired: where its end is now is unknown, so the next batch starts a new one.
   */
  write(segment: Segment, parts: readonly Uint8Array[], size: number, records: number): void {
    try {
      const written = writevSync(segment.fd, parts as Uint8Array[], segment.size);
      if (written !== size) throw shortWriteError(`Short write to segment ${segment.name} (${written} of ${size} bytes): is the disk full?`);
    } catch (error) {
      this.retire(segment);
      throw error;
    }
    segment.size += size;
    segment.records += records;
    segment.writtenAt = Date.now();
  }

  /** Whether the segment's file still has a name (a purge may have deleted it). */
  isLinked(segment: Segment): boolean {
    return isLinked(segment.fd);
  }

  /** Closes a segment for good; an empty one is deleted at once, others once no index line refers to them. */
  retire(segment: Segment): void {
    if (this.#current === segment) this.#current = null;
    try {
      closeSync(segment.fd);
      if (segment.size === 0) rmSync(this.path(segment.name), { force: true });
    } catch {
      // Already closed, or an empty file left: compaction deletes unreferenced segments.
    }
    if (segment.size > 0) this.#retired.add(segment.name);
  }

  /** Retires the segment being written, if any (on close). */
  retireCurrent(): void {
    if (this.#current !== null) this.retire(this.#current);
  }

  /** Whether a rolled-over segment of this writer is referred to by no index line: one deleteRetired() may delete. */
  hasDeletable(refersTo: RefersTo): boolean {
    for (const name of this.#retired) if (!refersTo(name)) return true;
    return false;
  }

  /** Deletes this writer's rolled-over segments no index line refers to; returns how many. Only under the index lock. */
  async deleteRetired(refersTo: RefersTo): Promise<number> {
    let deleted = 0;
    for (const name of [...this.#retired]) {
      if (refersTo(name)) continue;
      this.#retired.delete(name);
      if (await removeFile(this.path(name))) deleted++;
    }
    return deleted;
  }

  /**
   * Deletes the listed segments no index line refers to whose writer is done with them: this
   * writer's rolled-over ones, and other writers' not written for SEGMENT_STALE_MS. Only under
   * the index lock.
   */
  async deleteUnreferenced(names: readonly string[], refersTo: RefersTo): Promise<number> {
    let deleted = await this.deleteRetired(refersTo);
    const now = Date.now();
    for (const name of names) {
      if (refersTo(name) || name === this.#current?.name || this.#retired.has(name)) continue;
      const path = this.path(name);
      const stats = await ignoreMissing(stat(path));
      if (stats !== undefined && now - stats.mtimeMs >= SEGMENT_STALE_MS && (await removeFile(path))) deleted++;
    }
    return deleted;
  }

  /**
   * Deletes the listed segments that may go although index lines still refer to them (a full
   * disk, when every profile in them is being dropped): this writer's, the current one retired
   * first, and other writers' not written for SEGMENT_STALE_MS (their writer is gone); at most
   * `most`, in the order given. Needs no lock and writes nothing; returns the names deleted.
   */
  async deleteForSpace(names: Iterable<string>, most = Infinity): Promise<string[]> {
    const deleted: string[] = [];
    const now = Date.now();
    for (const name of names) {
      if (deleted.length >= most) break;
      if (name === this.#current?.name) this.retire(this.#current);
      else if (!this.#retired.has(name)) {
        const stats = await ignoreMissing(stat(this.path(name)));
        if (stats === undefined || now - stats.mtimeMs < SEGMENT_STALE_MS) continue;
      }
      this.#retired.delete(name);
      if (await removeFile(this.path(name))) deleted.push(name);
    }
    return deleted;
  }

  /** Whether `name` is a file, none of this writer's, that no writer has written for SEGMENT_STALE_MS: its writer is gone. */
  async isAbandoned(name: string): Promise<boolean> {
    if (name === this.#current?.name || this.#retired.has(name)) return false;
    const stats = await ignoreMissing(stat(this.path(name)));
    // A directory under a segment's name is someone else's (see removeFile).
    return stats !== undefined && stats.isFile() && Date.now() - stats.mtimeMs >= SEGMENT_STALE_MS;
  }

  /** Deletes every segment file, of every writer (a purge, under the index lock). */
  async deleteAll(): Promise<void> {
    for (const name of await this.list()) await removeFile(this.path(name));
    this.#retired.clear();
  }

  /** The record's bytes, or undefined when its segment is gone or too short (torn). */
  async read(name: string, offset: number, length: number): Promise<Buffer | undefined> {
    const handle = await ignoreMissing(open(this.path(name), 'r'));
    if (handle === undefined) return undefined;
    try {
      const buffer = Buffer.allocUnsafe(length);
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await handle.read(buffer, filled, length - filled, offset + filled);
        if (bytesRead === 0) return undefined;
        filled += bytesRead;
      }
      return buffer;
    } finally {
      await handle.close();
    }
  }

  /** Names of the segment files of every writer. */
  async list(): Promise<string[]> {
    return ((await ignoreMissing(readdir(this.#dir))) ?? []).filter((name) => SEGMENT_NAME.test(name));
  }

  /** Where the segment file of this name is. */
  path(name: string): string {
    return join(this.#dir, name);
  }
}

/** Whether the open file still has a name (a purge or a compaction may have deleted it). */
function isLinked(fd: number): boolean {
  try {
    return fstatSync(fd).nlink > 0;
  } catch {
    return false;
  }
}
