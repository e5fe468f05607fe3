/**
 * Items kept sorted by `time`, oldest first; equal times keep their insertion order. Profiles
 * arrive nearly in time order, so an insert is usually a push and dropping the oldest is O(1).
 */
export class TimeOrderedList<T extends { time: number }> {
  #items: Array<T | undefined> = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  insert(item: T): void {
    const items = this.#items;
    let low = this.#head;
    let high = items.length;
    if (high === low || (items[high - 1] as T).time <= item.time) {
      items.push(item);
      return;
    }
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((items[middle] as T).time <= item.time) low = middle + 1;
      else high = middle;
    }
    items.splice(low, 0, item);
  }

  oldest(): T | undefined {
    return this.#items[this.#head];
  }

  newest(): T | undefined {
    return this.#head < this.#items.length ? this.#items[this.#items.length - 1] : undefined;
  }

  /** Removes and returns the newest item. */
  pop(): T | undefined {
    return this.#head < this.#items.length ? this.#items.pop() : undefined;
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    // Reclaim the dead prefix once it is half the array, so memory stays proportional to size.
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Keeps only the items `keep` accepts, in order. */
  retain(keep: (item: T) => boolean): void {
    this.#items = this.#items.slice(this.#head).filter((item) => keep(item as T));
    this.#head = 0;
  }

  /** A copy of the items, oldest first. */
  toArray(): T[] {
    return this.#items.slice(this.#head) as T[];
  }

  /** Oldest first. */
  *oldestFirst(): IterableIterator<T> {
    for (let i = this.#head; i < this.#items.length; i++) yield this.#items[i] as T;
  }

  /** Newest first. */
  *newestFirst(): IterableIterator<T> {
    for (let i = this.#items.length - 1; i >= this.#head; i--) yield this.#items[i] as T;
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }
}
