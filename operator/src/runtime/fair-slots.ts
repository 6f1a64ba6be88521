// Probe slots shared fairly between namespaces: at most `limit` grants in flight overall and
// `perNamespaceLimit` per namespace, waiting work granted round-robin between namespaces (a
// ring of those with work waiting and room left, each a FIFO), in the spirit of API Priority
// and Fairness. One namespace whose probes hang cannot hold every slot, and with N namespaces
// waiting each gets a slot within N grants. Work-conserving: while fewer than `limit` are in
// flight and a namespace under its limit has work waiting, next() grants it. O(1) amortised.

export interface FairSlotsOptions {
  limit: number;
  /** Grants in flight per namespace at most; at least 1. */
  perNamespaceLimit: number;
}

interface Lane<T> {
  ns: string;
  items: T[];
  head: number;
  inFlight: number;
  inRing: boolean;
}

export class FairSlots<T> {
  private readonly limit: number;
  private readonly perNamespaceLimit: number;
  private readonly lanes = new Map<string, Lane<T>>();
  private ring: Array<Lane<T>> = [];
  private ringHead = 0;
  private total = 0;
  private queued = 0;

  constructor(opts: FairSlotsOptions) {
    this.limit = Math.max(1, opts.limit);
    this.perNamespaceLimit = Math.max(1, opts.perNamespaceLimit);
  }

  get inFlight(): number {
    return this.total;
  }

  get waiting(): number {
    return this.queued;
  }

  inFlightOf(ns: string): number {
    return this.lanes.get(ns)?.inFlight ?? 0;
  }

  waitingOf(ns: string): number {
    const lane = this.lanes.get(ns);
    return lane ? lane.items.length - lane.head : 0;
  }

  /** Queues an item of the namespace; next() hands it out in its turn. */
  push(ns: string, item: T): void {
    let lane = this.lanes.get(ns);
    if (!lane) {
      lane = { ns, items: [], head: 0, inFlight: 0, inRing: false };
      this.lanes.set(ns, lane);
    }
    lane.items.push(item);
    this.queued++;
    this.enterRing(lane);
  }

  /** The next item allowed to start, now counted in flight until release(ns); undefined when none may. */
  next(): T | undefined {
    if (this.total >= this.limit) return undefined;
    const lane = this.ring[this.ringHead];
    if (!lane) return undefined;
    this.ring[this.ringHead++] = undefined as unknown as Lane<T>; // let a drained lane be collected
    lane.inRing = false;
    const item = lane.items[lane.head] as T;
    lane.items[lane.head++] = undefined as unknown as T;
    this.queued--;
    lane.inFlight++;
    this.total++;
    if (lane.head === lane.items.length) {
      lane.items = [];
      lane.head = 0;
    } else if (lane.head > 64 && lane.head * 2 > lane.items.length) {
      lane.items = lane.items.slice(lane.head);
      lane.head = 0;
    }
    this.enterRing(lane); // to the back: the other namespaces waiting go first
    this.compactRing();
    return item;
  }

  /** Gives back a slot of the namespace that next() granted. */
  release(ns: string): void {
    const lane = this.lanes.get(ns);
    if (!lane || lane.inFlight === 0)
      throw new Error(`FairSlots.release: namespace ${JSON.stringify(ns)} holds no slot`);
    lane.inFlight--;
    this.total--;
    this.enterRing(lane);
    this.forgetIfIdle(lane);
  }

  /** Drops every waiting item; slots in flight stay counted until released. */
  clearWaiting(): void {
    for (const lane of this.lanes.values()) {
      lane.items = [];
      lane.head = 0;
      lane.inRing = false;
      this.forgetIfIdle(lane);
    }
    this.ring = [];
    this.ringHead = 0;
    this.queued = 0;
  }

  /** The first waiting item of each namespace (for stats; O(namespaces)). */
  heads(): T[] {
    const out: T[] = [];
    for (const lane of this.lanes.values()) if (lane.head < lane.items.length) out.push(lane.items[lane.head] as T);
    return out;
  }

  private enterRing(lane: Lane<T>): void {
    if (lane.inRing || lane.head >= lane.items.length || lane.inFlight >= this.perNamespaceLimit) {
      this.forgetIfIdle(lane);
      return;
    }
    lane.inRing = true;
    this.ring.push(lane);
  }

  private forgetIfIdle(lane: Lane<T>): void {
    if (lane.inFlight === 0 && lane.head >= lane.items.length && !lane.inRing) this.lanes.delete(lane.ns);
  }

  private compactRing(): void {
    if (this.ringHead > 64 && this.ringHead * 2 > this.ring.length) {
      this.ring = this.ring.slice(this.ringHead);
      this.ringHead = 0;
    }
  }
}
