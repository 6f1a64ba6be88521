// The operator replicas of one simulation: one, two with leader election, or 1-4 with shards on.
// A replica that crashed (cut, or at a failpoint) or was stopped is replaced by a new incarnation
// (its own API user) at the next step; with shards on, a dead slot may also stay empty a while, so
// replicas leave and join mid-history. Each incarnation may carry an armed failpoint.
import type { Clock } from "../../operator/src/runtime/clock.js";
import type { Rng } from "./prng.js";
import { Replica, type Failpoint } from "./replica.js";

export interface FleetOptions {
  apiUrl: string;
  clock: Clock;
  leaderElect: boolean;
  /** With shards on, this many replica slots (1-4), and the namespace whose owner is the writer. */
  shards?: { slots: number; namespace: string };
  maxReplacementsPer12h: number;
  maxReplacementsPer12hPerNamespace?: number;
  /** Decides failpoints; a stream of its own so crashes do not shift the history's draws. */
  rng: Rng;
  /** Called with each incarnation's user and start time (simulated). */
  onStart(user: string, at: number): void;
}

export const OPERATOR_USER_PREFIX = "operator-";

export class Fleet {
  private readonly slots: Array<Replica | undefined>;
  private incarnations = 0;
  /** Every incarnation ever started, for log dumps. */
  readonly all: Replica[] = [];

  constructor(private readonly o: FleetOptions) {
    this.slots = new Array<Replica | undefined>(o.shards?.slots ?? (o.leaderElect ? 2 : 1)).fill(undefined);
  }

  live(): Replica[] {
    return this.slots.filter((r): r is Replica => r !== undefined && !r.crashed);
  }

  /** The replica allowed to write: the only one, or the leader. */
  writer(): Replica | undefined {
    const live = this.live();
    const shards = this.o.shards;
    if (shards) return live.find((r) => r.owns(shards.namespace));
    return this.o.leaderElect ? live.find((r) => r.isLeader()) : live[0];
  }

  /** Starts an incarnation in every empty or dead slot (with shards on, some stay empty while another lives). */
  async fill(always = false): Promise<void> {
    for (let i = 0; i < this.slots.length; i++) {
      const r = this.slots[i];
      if (r && !r.crashed) continue;
      if (this.o.shards && !always && this.live().length > 0 && this.o.rng.chance(0.5)) continue;
      const pick = this.o.rng.weighted({ none: 6, "after-charge": 2, "after-evict": 2 });
      this.slots[i] = await this.startOne(pick === "none" ? undefined : pick);
    }
  }

  private async startOne(failpoint: Failpoint | undefined): Promise<Replica> {
    const user = `${OPERATOR_USER_PREFIX}${++this.incarnations}`;
    this.o.onStart(user, this.o.clock.now());
    const r = await Replica.start({
      apiUrl: this.o.apiUrl,
      user,
      clock: this.o.clock,
      leaderElect: this.o.leaderElect,
      shards: this.o.shards !== undefined,
      maxReplacementsPer12h: this.o.maxReplacementsPer12h,
      ...(this.o.maxReplacementsPer12hPerNamespace !== undefined
        ? { maxReplacementsPer12hPerNamespace: this.o.maxReplacementsPer12hPerNamespace }
        : {}),
      ...(failpoint ? { failpoint } : {}),
    });
    this.all.push(r);
    return r;
  }

  /** Kills the writer (or any live replica; with shards on, a drawn one) without any clean-up. */
  crash(): void {
    const live = this.live();
    if (this.o.shards && live.length > 0) live[this.o.rng.int(0, live.length - 1)]!.crash();
    else (this.writer() ?? live[0])?.crash();
  }

  /** The leader goes away: handing the lease over (graceful) or dying. */
  async leaderChange(graceful: boolean): Promise<void> {
    const leader = this.writer();
    if (!leader) return;
    if (graceful) await leader.stop();
    else leader.crash();
  }

  async stop(): Promise<void> {
    for (const r of this.live()) r.crash();
    await Promise.all(this.all.map((r) => r.buried()));
  }
}
