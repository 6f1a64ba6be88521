// The pods a ReplicaSet owns, kept from pod events so that a sync looks only at the pods that
// changed since the last one, and the counts its status needs, kept as pods come, change and go.
// A sync that read every pod of the namespace on each pod change was quadratic: at ten thousand
// pods it took most of the process.
import type { V1Pod } from "@kubernetes/client-node";
import { isActive, isPodAvailable, isPodReady } from "./pods.js";

interface Counted {
  pod: V1Pod;
  active: boolean;
  /** Active, and Ready. */
  ready: boolean;
  /** Active, and carrying every label of the template. */
  labeled: boolean;
}

export class OwnedPods {
  private readonly pods = new Map<string, Counted>();
  private dirty = new Set<string>();
  active = 0;
  ready = 0;
  labeled = 0;

  /** `version`: what the claims depend on (the ReplicaSet's uid, generation and deletion); another one needs a new index. */
  constructor(
    readonly version: string,
    private readonly templateLabels: ReadonlyArray<[string, string]>,
  ) {}

  /** A pod that may have changed (or gone) since the last sync. */
  touch(podKey: string): void {
    this.dirty.add(podKey);
  }

  /** The pods touched since the last call. */
  takeTouched(): string[] {
    const out = [...this.dirty];
    this.dirty = new Set();
    return out;
  }

  /** The pod as claimed now, or undefined when it is not (or no longer) this ReplicaSet's. */
  set(podKey: string, pod: V1Pod | undefined): void {
    const before = this.pods.get(podKey);
    if (before) this.count(before, -1);
    if (!pod) {
      this.pods.delete(podKey);
      return;
    }
    const active = isActive(pod);
    const entry: Counted = {
      pod,
      active,
      ready: active && isPodReady(pod),
      labeled: active && this.templateLabels.every(([k, v]) => pod.metadata?.labels?.[k] === v),
    };
    this.pods.set(podKey, entry);
    this.count(entry, 1);
  }

  private count(e: Counted, sign: 1 | -1): void {
    if (e.active) this.active += sign;
    if (e.ready) this.ready += sign;
    if (e.labeled) this.labeled += sign;
  }

  activePods(): V1Pod[] {
    const out: V1Pod[] = [];
    for (const e of this.pods.values()) if (e.active) out.push(e.pod);
    return out;
  }

  /** Active pods Ready for minReadySeconds: without a minimum, every ready one, without a look at them. */
  available(minReadySeconds: number, now: number): number {
    if (minReadySeconds === 0) return this.ready;
    let n = 0;
    for (const e of this.pods.values()) if (e.ready && isPodAvailable(e.pod, minReadySeconds, now)) n++;
    return n;
  }
}
