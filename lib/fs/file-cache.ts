import { statSync, type Stats } from 'node:fs';

/**
 * What was read from files, per path, kept while the file's mtime and size stay the same; the
 * `maxFiles` most recently used are kept. For the debug page's reads (source excerpts, source
 * maps), which are synchronous and must not read a file on every frame of every page.
 */
export class FileCache<T> {
  // Insertion order is use order: the first key is the least recently used.
  readonly #entries = new Map<string, { mtimeMs: number; size: number; value: T }>();

  constructor(readonly maxFiles: number) {}

  /** What `load` made of the regular file at `path` (cached), or undefined when there is no such file. */
  get(path: string, load: (path: string, stats: Stats) => T): T | undefined {
    const stats = statSync(path, { throwIfNoEntry: false });
    const cached = this.#entries.get(path);
    this.#entries.delete(path);
    if (!stats || !stats.isFile()) return undefined;
    if (cached && cached.mtimeMs === stats.mtimeMs && cached.size === stats.size) {
      this.#entries.set(path, cached);
      return cached.value;
    }
    const value = load(path, stats);
    this.#entries.set(path, { mtimeMs: stats.mtimeMs, size: stats.size, value });
    while (this.#entries.size > this.maxFiles) this.#entries.delete(this.#entries.keys().next().value!);
    return value;
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }
}
