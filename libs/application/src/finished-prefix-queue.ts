/** Past this many taken entries at its front, the queue drops them (a copy of what is left). */
const COMPACT_AFTER = 1024;

/**
 * Work taken from the log in log order, of which a follower may only count as done (move its
 * checkpoint past) the longest finished prefix. A queue with a moving front, not Array.shift: a
 * backlog of tens of thousands of entries (a host with thousands of machines, a follower catching
 * up, a delivery retried for hours with everything behind it waiting) lives in V8's large-object
 * space, where every shift copies the whole array: draining 50,000 entries held the event loop for
 * seconds.
 */
export class FinishedPrefixQueue<T extends { finished: boolean }> {
  private entries: T[] = [];
  private front = 0;

  push(entry: T): void {
    this.entries.push(entry);
  }

  /** Takes out the longest prefix of finished entries, in order (none: an empty array). */
  takeFinished(): T[] {
    const start = this.front;
    while (this.front < this.entries.length && this.entries[this.front].finished) this.front++;
    const taken = this.entries.slice(start, this.front);
    if (this.front > COMPACT_AFTER && this.front * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.front);
      this.front = 0;
    }
    return taken;
  }

  /** The entries not taken yet, in order. */
  pending(): T[] {
    return this.entries.slice(this.front);
  }
}
