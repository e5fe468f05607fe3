import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { NONE_DROPPED_NEWEST, PURGED_THROUGH, decodeIndexHeader, decodeIndexLine, leadingToken, readIndexLines, type DroppedNewest, type FileIdentity, type IndexRecord } from './index-file.js';
import { isMissing } from './fs-errors.js';
import { TimeOrderedList } from './time-ordered-list.js';

/**
 * This process's copy of the shared index file, for reads, searches and bound checks. A refresh
 * reads only the bytes appended since the last one, so other processes' profiles show up at the
 * cost of a stat; lines this process wrote (and added itself) are recognised without parsing.
 * When another process compacted (the file was replaced), it reads it all again, reusing the
 * records whose lines it already knows.
 */
export class ProfileIndex {
  readonly path: string;
  #entries = new Map<string, IndexRecord>();
  #byTime = new TimeOrderedList<IndexRecord>();
  /** Entries per segment file: a segment nobody refers to may be deleted. */
  #segments = new Map<string, number>();
  #bytes = 0;
  #skipped = 0;
  #droppedThrough: number | null = null;
  #droppedNewest: Readonly<DroppedNewest> = NONE_DROPPED_NEWEST;
  #headed = false;
  #droppedEver: number | null | undefined = null;
  /** The newest droppedEver this copy has read or written, kept when the file loses its header. */
  #droppedEverSeen: number | null = null;
  #file: FileIdentity | null = null;
  /**
   * A descriptor of `#file`, held open so that its inode cannot be freed and its number given to a
   * later file: an index replaced twice by other processes' compactions got the inode number of the
   * file this copy had read, and taken for that file, its new lines were read from the old offset
   * (or not at all, at the same size), and searches missed profiles until the next compaction.
   * Null when not pinned: the file is then read whole at the next refresh.
   */
  #fd: number | null = null;
  #closed = false;
  #offset = 0;
  /** Bumped by replace(): a read that started before it must not apply its lines after it. */
  #generation = 0;
  /** Reads run one at a time; a refresh asked for while one runs is queued (and shared) behind it. */
  #reading: Promise<unknown> = Promise.resolve();
  #queued: Promise<void> | null = null;

  constructor(path: string) {
    this.path = path;
  }

  /** Profiles indexed (each token once). */
  get size(): number {
    return this.#entries.size;
  }

  /** Bytes of the indexed profiles. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Lines read that were not valid entries (torn by crashes) since the file was last rewritten. */
  get skippedLines(): number {
    return this.#skipped;
  }

  /** From the header of the file as last compacted: its entries up to this time were dropped (null: none). */
  get droppedThrough(): number | null {
    return this.#droppedThrough;
  }

  /** From the header of the file as last compacted: what it dropped from the newest end (see encodeIndexHeader). */
  get droppedNewest(): Readonly<DroppedNewest> {
    return this.#droppedNewest;
  }

  /**
   * The newest time of a profile any compaction of this index dropped, from its header: null when
   * none was, or when the file has no header (never compacted; or deleted, cut to nothing or
   * overwritten since, its lines lost); undefined when the header was written before this was
   * recorded. A segment's record no line refers to, newer than this, was never dropped: its line
   * was lost (see FileStorage's recovery).
   */
  get droppedEver(): number | null | undefined {
    return this.#headed ? this.#droppedEver : null;
  }

  /**
   * The newest droppedEver of any header this copy read or was given, null when none: kept when
   * the file is deleted, cut or overwritten (its header lost with it), so a compaction of this
   * process still knows what was dropped before.
   */
  get droppedEverSeen(): number | null {
    return this.#droppedEverSeen;
  }

  #sawDroppedEver(droppedEver: number | null | undefined): void {
    if (typeof droppedEver === 'number' && (this.#droppedEverSeen === null || droppedEver > this.#droppedEverSeen)) this.#droppedEverSeen = droppedEver;
  }

  get(token: string): IndexRecord | undefined {
    return this.#entries.get(token);
  }

  has(token: string): boolean {
    return this.#entries.has(token);
  }

  /** Whether an indexed profile is in the segment file. */
  refersTo(segment: string): boolean {
    return this.#segments.has(segment);
  }

  oldest(): IndexRecord | undefined {
    return this.#byTime.oldest();
  }

  oldestFirst(): IterableIterator<IndexRecord> {
    return this.#byTime.oldestFirst();
  }

  newestFirst(): IterableIterator<IndexRecord> {
    return this.#byTime.newestFirst();
  }

  /** Catches up with the file; a call made while a read runs waits for the next one (shared by such callers). */
  refresh(): Promise<void> {
    if (this.#queued !== null) return this.#queued;
    const run = this.#reading.then(() => {
      this.#queued = null;
      return this.#refreshFromPath();
    });
    this.#queued = run;
    this.#reading = run.catch(() => {});
    return run;
  }

  /** Reads the whole file again, whatever this copy holds (records whose lines it knows are reused). */
  reload(): Promise<void> {
    const run = this.#reading.then(() => {
      this.#file = null;
      this.#pin(null);
      return this.#refreshFromPath(true);
    });
    this.#reading = run.catch(() => {});
    return run;
  }

  /**
   * Catches up with the open file `handle` (a compaction's, under the lock), and returns what it
   * then holds: the records oldest first, the segments they refer to, and the offset just past
   * the last complete line read.
   */
  catchUp(handle: FileHandle): Promise<{ records: IndexRecord[]; segments: string[]; end: number }> {
    const run = this.#reading.then(async () => {
      await this.#readFrom(handle);
      return { records: this.#byTime.toArray(), segments: [...this.#segments.keys()], end: this.#offset };
    });
    this.#reading = run.catch(() => {});
    return run;
  }

  /**
   * Runs `fn` with no read of the file started meanwhile (reads asked for wait behind it): for a
   * compaction or purge replacing the file, until this copy has taken the new file's state.
   * `fn` must not wait for a read itself.
   */
  hold<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#reading.then(fn);
    this.#reading = run.catch(() => {});
    return run;
  }

  /** Adds records this process just appended to the file, before a refresh reads them back. */
  addAll(records: readonly IndexRecord[]): void {
    // A batch's records share their segment: its count is updated once, not per record.
    let segment: string | null = null;
    let added = 0;
    for (const record of records) {
      if (this.#entries.has(record.token)) continue;
      this.#entries.set(record.token, record);
      this.#byTime.insert(record);
      this.#bytes += record.bytes;
      if (record.segment !== segment) {
        this.#countSegment(segment, added);
        segment = record.segment;
        added = 0;
      }
      added++;
    }
    this.#countSegment(segment, added);
  }

  /**
   * Told that this process appended `bytes` of lines (whose records it added) and the file then
   * had `file.size` bytes: when nothing else was appended since this copy's last read, the next
   * refresh starts after them instead of reading this process's own lines back. False when this
   * copy had not read everything before them: another process's lines may come first (the same
   * token among them: the first line wins), so the file must be read, the caller's lines with it.
   */
  appended(file: FileIdentity & { size: number }, bytes: number): boolean {
    if (this.#file === null || !this.#isSameFile(file) || this.#offset !== file.size - bytes) return false;
    this.#offset = file.size;
    return true;
  }

  /**
   * Takes a compaction's result: the file is now `file`, whose first `end` bytes hold this copy's
   * records but `removed`, and what it dropped went up to `droppedThrough` (and `newest`, from the
   * newest end). Records this copy holds beyond the compacted ones are in the file's tail, read by
   * the next refresh.
   */
  compacted(removed: Iterable<IndexRecord>, end: number, file: FileIdentity, droppedThrough: number | null, droppedEver: number | null, newest: Readonly<DroppedNewest> = NONE_DROPPED_NEWEST): void {
    this.#generation++;
    const deleted: IndexRecord[] = [];
    // The removed records come in runs of one segment: its count is updated once per run.
    let segment: string | null = null;
    let gone = 0;
    for (const record of removed) {
      if (this.#entries.get(record.token) !== record) continue;
      this.#entries.delete(record.token);
      this.#bytes -= record.bytes;
      if (record.segment !== segment) {
        this.#countSegment(segment, -gone);
        segment = record.segment;
        gone = 0;
      }
      gone++;
      deleted.push(record);
    }
    this.#countSegment(segment, -gone);
    // Usually the removed records are the oldest ones, in order: dropped from the front by
    // identity, with no look-up and no pass over the rest.
    let dropped = 0;
    while (dropped < deleted.length && this.#byTime.oldest() === deleted[dropped]) {
      this.#byTime.shift();
      dropped++;
    }
    if (dropped < deleted.length) this.#byTime.retain((record) => this.#entries.get(record.token) === record);
    this.#skipped = 0;
    this.#file = { dev: file.dev, ino: file.ino };
    this.#pin(null);
    this.#offset = end;
    this.#droppedThrough = droppedThrough;
    this.#droppedNewest = newest;
    this.#droppedEver = droppedEver;
    this.#sawDroppedEver(droppedEver);
    this.#headed = true;
  }

  /** Takes an emptied file (a purge): `end` bytes of header, no record. */
  emptied(end: number, file: FileIdentity, droppedThrough: number | null, droppedEver: number | null): void {
    this.#generation++;
    this.#clear();
    this.#file = { dev: file.dev, ino: file.ino };
    this.#pin(null);
    this.#offset = end;
    this.#droppedThrough = droppedThrough;
    this.#droppedEver = droppedEver;
    // Nothing written before a purge is left to read back: what was dropped before it no longer matters.
    this.#droppedEverSeen = droppedEver;
    this.#headed = true;
  }

  /** Lets go of the file (its descriptor); a later refresh reads it without holding it. */
  close(): void {
    this.#closed = true;
    this.#pin(null);
  }

  /**
   * Holds `fd` open as the descriptor of `#file`; with null, opens the path and holds that when it
   * is still `#file`, else holds none (the next refresh reads the file whole). Never throws: holding
   * none is always safe, and an open failing here (EMFILE, EACCES) came after a compaction's or a
   * purge's rename, whose new file this copy had taken: it failed them as not done, and left the
   * old file held under the new one's identity, so the next search read the old file and listed
   * the profiles just dropped.
   */
  #pin(fd: number | null): void {
    if (fd === null && this.#file !== null && !this.#closed) {
      let opened: number | undefined;
      try {
        opened = openSync(this.path, 'r');
        const stats = fstatSync(opened);
        if (stats.ino === this.#file.ino && stats.dev === this.#file.dev) [fd, opened] = [opened, undefined];
      } catch {
        // Held none: the next refresh opens the path, and says why if it still cannot.
      } finally {
        if (opened !== undefined) closeQuietly(opened);
      }
    }
    const previous = this.#fd;
    this.#fd = this.#closed ? null : fd;
    if (previous !== null && previous !== fd) closeQuietly(previous);
  }

  // Synchronous, like every file operation on the save path (see FileStorage.writeMany): a stat
  // and a read of the new tail answer in microseconds, each awaited step takes a loop turn.
  async #refreshFromPath(fresh = false): Promise<void> {
    let stats;
    try {
      stats = statSync(this.path);
    } catch (error) {
      if (!isMissing(error)) throw error;
      this.#clear();
      this.#pin(null);
      return;
    }
    if (this.#isSameFile(stats) && stats.size === this.#offset) return;
    // The file held: read through its descriptor, which names it for sure.
    if (this.#isSameFile(stats) && !fresh) return this.#readFrom(this.#fd as number);
    let fd;
    try {
      fd = openSync(this.path, 'r');
    } catch (error) {
      if (!isMissing(error)) throw error;
      this.#clear();
      this.#pin(null);
      return;
    }
    try {
      await this.#readFrom(fd, fresh);
    } finally {
      // Kept when it became the file held.
      if (this.#fd !== fd) closeSync(fd);
    }
  }

  /**
   * `fresh`: forget every record not in the file (reload()). Otherwise the first file read is
   * merged with what this copy holds: records it holds before then were all added by this process
   * after appending their lines (add()), so the file has them, even where the snapshot read here
   * was taken before the append. Starting over there lost them until the next refresh (a search
   * or a compaction's snapshot in between saw the profiles just written missing).
   */
  async #readFrom(handle: FileHandle | number, fresh = false): Promise<void> {
    const generation = this.#generation;
    const current = fstatSync(typeof handle === 'number' ? handle : handle.fd);
    const first = this.#file === null && !fresh;
    const again = fresh || (!first && (!this.#isSameFile(current) || current.size < this.#offset));
    const { lines, end } = readIndexLines(handle, again ? 0 : this.#offset, current.size);
    if (generation !== this.#generation) return;
    if (again) {
      const known = this.#entries;
      this.#clear();
      this.#file = { dev: current.dev, ino: current.ino };
      this.#ingest(lines, known);
    } else {
      if (first) this.#file = { dev: current.dev, ino: current.ino };
      this.#ingest(lines, this.#entries);
    }
    // A compaction's handle is its own, closed when it is done: the path is opened to hold the file.
    if (again || first) this.#pin(typeof handle === 'number' ? handle : null);
    this.#offset = end;
  }

  /** Adds the lines' entries; a line equal to a known record's is that record, not parsed again. */
  #ingest(lines: string[], known: Map<string, IndexRecord>): void {
    for (const line of lines) {
      const token = leadingToken(line);
      const record = token === undefined ? undefined : known.get(token);
      if (record !== undefined && record.line === line) {
        this.#add(record);
        continue;
      }
      const decoded = decodeIndexLine(line);
      if (decoded !== null) {
        this.#add(decoded);
        continue;
      }
      const header = decodeIndexHeader(line);
      if (header === undefined) this.#skipped++;
      else {
        this.#droppedThrough = header.droppedThrough;
        this.#droppedNewest = { aheadFrom: header.aheadFrom, overBytes: header.overBytes };
        this.#droppedEver = header.droppedEver;
        // A purge's header (another process's, as emptied() is this one's): what was dropped before
        // it no longer matters, and kept, it would go back into the next header written here.
        if (header.droppedThrough !== null && header.droppedThrough >= PURGED_THROUGH) this.#droppedEverSeen = header.droppedEver ?? null;
        else this.#sawDroppedEver(header.droppedEver);
        this.#headed = true;
      }
    }
  }

  /** Whether `file` is the one this copy has read: only while it is held open, as its inode number is then its own. */
  #isSameFile(file: FileIdentity): boolean {
    return this.#fd !== null && this.#file !== null && this.#file.ino === file.ino && this.#file.dev === file.dev;
  }

  #add(record: IndexRecord): void {
    // A line appended twice (see FileStorage's appends) keeps its first copy.
    if (this.#entries.has(record.token)) return;
    this.#entries.set(record.token, record);
    this.#byTime.insert(record);
    this.#bytes += record.bytes;
    this.#countSegment(record.segment, 1);
  }

  /** Adds `delta` to the entries counted for the segment (none for the old layout's null); forgets it at 0. */
  #countSegment(segment: string | null, delta: number): void {
    if (segment === null || delta === 0) return;
    const count = (this.#segments.get(segment) ?? 0) + delta;
    if (count > 0) this.#segments.set(segment, count);
    else this.#segments.delete(segment);
  }

  #clear(): void {
    this.#entries = new Map();
    this.#byTime.clear();
    this.#segments.clear();
    this.#bytes = 0;
    this.#skipped = 0;
    this.#droppedThrough = null;
    this.#droppedNewest = NONE_DROPPED_NEWEST;
    this.#headed = false;
    this.#droppedEver = null;
    // The descriptor held, if any, stays until the caller pins another file or none (it may be reading through it).
    this.#file = null;
    this.#offset = 0;
  }
}

/** Closes a descriptor only read from: a failure to close it (EIO, on a network filesystem) loses nothing. */
function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Nothing was written through it.
  }
}
