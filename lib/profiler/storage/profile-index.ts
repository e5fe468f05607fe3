import { open, stat } from 'node:fs/promises';
import { readIndexFrom, type IndexEntry } from './index-file.js';
import { isMissing } from './fs-errors.js';
import { TimeOrderedList } from './time-ordered-list.js';

/** Which file the cache was read from: a compaction replaces the index with a new file. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/**
 * This process's summary of the shared index file, for searches and bound checks. A refresh
 * reads only the bytes appended since the last one, so other processes' profiles show up at the
 * cost of a stat; when another process compacted (the file was replaced), it reads it all again.
 */
export class ProfileIndex {
  readonly path: string;
  #entries = new Map<string, IndexEntry>();
  #byTime = new TimeOrderedList<IndexEntry>();
  #bytes = 0;
  #skipped = 0;
  #file: FileIdentity | null = null;
  #offset = 0;
  #refreshing: Promise<void> | null = null;

  constructor(path: string) {
    this.path = path;
  }

  /** Profiles indexed (each token once). */
  get size(): number {
    return this.#entries.size;
  }

  /** Bytes of the indexed profiles' files. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Lines read that were not valid entries (torn by crashes) since the file was last rewritten. */
  get skippedLines(): number {
    return this.#skipped;
  }

  oldest(): IndexEntry | undefined {
    return this.#byTime.oldest();
  }

  newestFirst(): IterableIterator<IndexEntry> {
    return this.#byTime.newestFirst();
  }

  /** Catches up with the file; concurrent callers share one read. */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#refresh().finally(() => {
      this.#refreshing = null;
    });
    return this.#refreshing;
  }

  /** Takes the entries a compaction just wrote (`end` bytes, in file `file`), sorted oldest first. */
  replace(entries: IndexEntry[], end: number, file: FileIdentity): void {
    this.#clear();
    for (const entry of entries) this.#add(entry);
    this.#file = { dev: file.dev, ino: file.ino };
    this.#offset = end;
  }

  async #refresh(): Promise<void> {
    let stats;
    try {
      stats = await stat(this.path);
    } catch (error) {
      if (!isMissing(error)) throw error;
      this.#clear();
      return;
    }
    if (this.#isSameFile(stats) && stats.size === this.#offset) return;
    let handle;
    try {
      handle = await open(this.path, 'r');
    } catch (error) {
      if (!isMissing(error)) throw error;
      this.#clear();
      return;
    }
    try {
      const current = await handle.stat();
      if (!this.#isSameFile(current) || current.size < this.#offset) {
        this.#clear();
        this.#file = { dev: current.dev, ino: current.ino };
      }
      const chunk = await readIndexFrom(handle, this.#offset, current.size);
      for (const entry of chunk.entries) this.#add(entry);
      this.#skipped += chunk.skipped;
      this.#offset = chunk.end;
    } finally {
      await handle.close();
    }
  }

  #isSameFile(file: FileIdentity): boolean {
    return this.#file !== null && this.#file.ino === file.ino && this.#file.dev === file.dev;
  }

  #add(entry: IndexEntry): void {
    // A line appended twice (see appendIndexLine) keeps its first copy.
    if (this.#entries.has(entry.token)) return;
    this.#entries.set(entry.token, entry);
    this.#byTime.insert(entry);
    this.#bytes += entry.bytes;
  }

  #clear(): void {
    this.#entries.clear();
    this.#byTime.clear();
    this.#bytes = 0;
    this.#skipped = 0;
    this.#file = null;
    this.#offset = 0;
  }
}
