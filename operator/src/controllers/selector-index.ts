// Label selectors by key, looked up from a pod's labels: which selectors match a pod without
// matching every one of them (every pod event asked all 500 policies of a namespace, and a
// relist of 50,000 pods after an expired watch made that 25 million matches). A selector is
// filed under one of its matchLabels, which any pod it matches must carry; one without
// matchLabels (or malformed) is matched against every pod of its namespace, as before.
import { matchesLabelSelector, type LabelSelector } from "../domain/label-selector.js";
import { addTo, addTo2, removeFrom, removeFrom2 } from "./nested-sets.js";

type Labels = Readonly<Record<string, string>> | undefined;

interface Filed {
  namespace: string;
  selector: LabelSelector;
  /** The "key\0value" it is filed under; undefined: matched against every pod. */
  anchor: string | undefined;
}

export class SelectorIndex {
  private readonly filed = new Map<string, Filed>();
  /** namespace → anchor → keys. */
  private readonly anchored = new Map<string, Map<string, Set<string>>>();
  /** namespace → keys matched against every pod. */
  private readonly unanchored = new Map<string, Set<string>>();

  /** Files (or refiles) a selector under its key; a value that is not a selector object removes the key. */
  set(key: string, namespace: string, selector: unknown): void {
    this.delete(key);
    if (typeof selector !== "object" || selector === null) return;
    const anchor = anchorOf(selector as LabelSelector);
    this.filed.set(key, { namespace, selector: selector as LabelSelector, anchor });
    if (anchor === undefined) addTo(this.unanchored, namespace, key);
    else addTo2(this.anchored, namespace, anchor, key);
  }

  delete(key: string): void {
    const f = this.filed.get(key);
    if (!f) return;
    this.filed.delete(key);
    if (f.anchor === undefined) removeFrom(this.unanchored, f.namespace, key);
    else removeFrom2(this.anchored, f.namespace, f.anchor, key);
  }

  /** The keys whose selectors match these labels of a pod in the namespace. */
  matching(namespace: string, labels: Labels): string[] {
    const out: string[] = [];
    const consider = (keys: ReadonlySet<string> | undefined) => {
      for (const key of keys ?? []) if (matchesLabelSelector(this.filed.get(key)!.selector, labels)) out.push(key);
    };
    consider(this.unanchored.get(namespace));
    const anchors = this.anchored.get(namespace);
    // Each selector has one anchor, and a pod has one value per label key: no key is seen twice.
    if (anchors) for (const [k, v] of Object.entries(labels ?? {})) consider(anchors.get(`${k}\0${v}`));
    return out;
  }
}

/** The first matchLabels entry with a string value; a matching pod must carry it. */
function anchorOf(selector: LabelSelector): string | undefined {
  const labels = selector.matchLabels;
  if (typeof labels !== "object" || labels === null) return undefined;
  for (const [k, v] of Object.entries(labels)) if (typeof v === "string") return `${k}\0${v}`;
  return undefined;
}
