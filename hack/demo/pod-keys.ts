// The number keys of the live view follow the pod, not the row: a pod keeps its key for its
// whole life, whatever comes and goes around it, and a new pod (a replacement, a scale-up)
// takes the smallest key free, so a key never silently moves to another pod that was there.

/** Keys 1-9: a tenth pod has none. */
export const MAX_KEYS = 9;

/**
 * The keys after a change of pods: every pod still there keeps its key; the pods gone free
 * theirs; each new pod, oldest first (`pods` is in that order), takes the smallest free one.
 * Pure: the same inputs give the same keys.
 */
export function assignPodKeys(
  previous: ReadonlyMap<string, number>,
  pods: readonly { uid: string }[],
): Map<string, number> {
  const present = new Set(pods.map((p) => p.uid));
  const keys = new Map([...previous].filter(([uid]) => present.has(uid)));
  const taken = new Set(keys.values());
  let next = 1;
  for (const { uid } of pods) {
    if (keys.has(uid)) continue;
    while (taken.has(next)) next++;
    if (next > MAX_KEYS) break;
    keys.set(uid, next);
    taken.add(next);
  }
  return keys;
}
