// JSON text of objects nobody changes, written once: a stored object's view goes out as its write's
// answer and as the watch event of every watcher, the same text each time.
const texts = new WeakMap<object, string | undefined>();

/** From now on `obj` is never changed: its JSON may be written once and reused. */
export function markUnchanging(obj: object): void {
  if (!texts.has(obj)) texts.set(obj, undefined);
}

/** JSON.stringify, reusing the text of an object marked unchanging. */
export function jsonText(value: unknown): string {
  if (typeof value !== "object" || value === null || !texts.has(value)) return JSON.stringify(value);
  let text = texts.get(value);
  if (text === undefined) texts.set(value, (text = JSON.stringify(value)));
  return text;
}
