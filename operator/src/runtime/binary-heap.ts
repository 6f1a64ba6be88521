// A binary min-heap: the one the work queue's delayed adds and the probe scheduler's due times
// share. `onMove` tells each item its position, so an item can be removed or re-sorted in
// O(log n) when its key changes (the scheduler keeps it on the item; -1 means not in the heap).

export class BinaryHeap<T> {
  private readonly items: T[] = [];

  constructor(
    private readonly less: (a: T, b: T) => boolean,
    private readonly onMove: (item: T, index: number) => void = () => {},
  ) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    this.items.push(item);
    this.siftUp(this.items.length - 1);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top !== undefined) this.removeAt(0);
    return top;
  }

  /** Removes the item at a position the heap reported through onMove. */
  removeAt(index: number): void {
    if (index < 0 || index >= this.items.length) return;
    const removed = this.items[index] as T;
    const last = this.items.pop() as T;
    this.onMove(removed, -1);
    if (index < this.items.length) {
      this.items[index] = last;
      this.onMove(last, index);
      this.siftUp(this.siftDown(index));
    }
  }

  /** Restores the order after the key of the item at `index` changed. */
  fix(index: number): void {
    if (index < 0 || index >= this.items.length) return;
    this.siftDown(this.siftUp(index));
  }

  clear(): void {
    for (const item of this.items) this.onMove(item, -1);
    this.items.length = 0;
  }

  /** Moves the item at i up to its place; returns where it ended. */
  private siftUp(i: number): number {
    const h = this.items;
    const item = h[i] as T;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent] as T;
      if (!this.less(item, p)) break;
      h[i] = p;
      this.onMove(p, i);
      i = parent;
    }
    h[i] = item;
    this.onMove(item, i);
    return i;
  }

  /** Moves the item at i down to its place; returns where it ended. */
  private siftDown(i: number): number {
    const h = this.items;
    const n = h.length;
    const item = h[i] as T;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      const right = child + 1;
      if (right < n && this.less(h[right] as T, h[child] as T)) child = right;
      const c = h[child] as T;
      if (!this.less(c, item)) break;
      h[i] = c;
      this.onMove(c, i);
      i = child;
    }
    h[i] = item;
    this.onMove(item, i);
    return i;
  }
}
