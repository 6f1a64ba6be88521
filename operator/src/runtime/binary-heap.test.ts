import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { BinaryHeap } from "./binary-heap.js";

interface Item {
  key: number;
  at: number;
}

function aHeap() {
  return new BinaryHeap<Item>(
    (a, b) => a.key < b.key,
    (item, index) => (item.at = index),
  );
}

function drain(heap: BinaryHeap<Item>): number[] {
  const out: number[] = [];
  for (let top = heap.pop(); top; top = heap.pop()) out.push(top.key);
  return out;
}

describe("the binary heap", () => {
  it.each([
    { name: "empty", keys: [], popped: [] },
    { name: "one item", keys: [3], popped: [3] },
    { name: "items pop smallest first", keys: [5, 1, 4, 2, 3], popped: [1, 2, 3, 4, 5] },
    { name: "equal keys all come out", keys: [2, 2, 1], popped: [1, 2, 2] },
  ])("$name", ({ keys, popped }) => {
    const heap = aHeap();
    for (const key of keys) heap.push({ key, at: -1 });
    expect(drain(heap)).toEqual(popped);
  });

  it("removes an item by the position it was told, and marks it out of the heap", () => {
    const heap = aHeap();
    const items = [5, 1, 4, 2, 3].map((key) => ({ key, at: -1 }));
    for (const item of items) heap.push(item);
    const four = items[2]!;
    heap.removeAt(four.at);
    expect(four.at).toBe(-1);
    expect(drain(heap)).toEqual([1, 2, 3, 5]);
  });

  it("re-sorts an item whose key changed", () => {
    const heap = aHeap();
    const items = [1, 2, 3].map((key) => ({ key, at: -1 }));
    for (const item of items) heap.push(item);
    items[0]!.key = 10;
    heap.fix(items[0]!.at);
    expect(drain(heap)).toEqual([2, 3, 10]);
  });

  it("always pops in sorted order, whatever is pushed, removed and re-keyed (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (keys, removals) => {
          const heap = aHeap();
          const items = keys.map((key) => ({ key, at: -1 }));
          for (const item of items) heap.push(item);
          const removed = new Set<Item>();
          for (const r of removals) {
            const item = items[r % Math.max(1, items.length)];
            if (!item || removed.has(item)) continue;
            heap.removeAt(item.at);
            removed.add(item);
          }
          const expected = items
            .filter((i) => !removed.has(i))
            .map((i) => i.key)
            .sort((a, b) => a - b);
          expect(drain(heap)).toEqual(expected);
        },
      ),
    );
  });
});
