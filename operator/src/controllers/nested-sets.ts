// Sets of strings kept under a key, or under two keys, with a set or map that empties removed:
// the shape of the controllers' indexes (pods by label, selectors by label, policies by pod).

export function addTo(sets: Map<string, Set<string>>, key: string, value: string): void {
  let set = sets.get(key);
  if (!set) sets.set(key, (set = new Set()));
  set.add(value);
}

export function removeFrom(sets: Map<string, Set<string>>, key: string, value: string): void {
  const set = sets.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) sets.delete(key);
}

export function addTo2(sets: Map<string, Map<string, Set<string>>>, outer: string, inner: string, value: string): void {
  let inside = sets.get(outer);
  if (!inside) sets.set(outer, (inside = new Map()));
  addTo(inside, inner, value);
}

export function removeFrom2(
  sets: Map<string, Map<string, Set<string>>>,
  outer: string,
  inner: string,
  value: string,
): void {
  const inside = sets.get(outer);
  if (!inside) return;
  removeFrom(inside, inner, value);
  if (inside.size === 0) sets.delete(outer);
}
