// Moving simulated time: the fake clock advances in small ticks, and after each tick the
// simulation waits (on a real-time deadline, polling, never sleeping a fixed time) until the
// system is quiet: no probe in flight, every live synced replica with as many reconciles
// finished as keys queued, and no new API request or probe for a few polls in a row.
import type { FakeClock } from "../../operator/src/runtime/testing/fake-clock.js";
import type { RequestLogEntry } from "../../hack/apiserver/index.js";
import type { Fleet } from "./fleet.js";
import type { PodServers } from "./pod-servers.js";
import { realNow } from "./sim-clock.js";

export const TICK_MS = 500;
/**
 * Within a tick, timers fire in order in slices of this many ms, with one turn of the event loop
 * between slices so promise chains a timer started can arm the next timers. (FakeClock's
 * advanceAsync gives several turns after every single timer, which costs more than the rest.)
 */
const SLICE_MS = 100;
/** Polls in a row with nothing new before the system counts as quiet. */
const QUIET_POLLS = 3;
const POLL_MS = 4;
/** Real ms to wait for quiet; a probe timing out by the prober's real 1 s timer fits in it. */
const QUIET_DEADLINE_MS = 8_000;

export interface SettleDeps {
  clock: FakeClock;
  requestLog: RequestLogEntry[];
  servers: PodServers;
  fleet: Fleet;
  /** Runs after each tick, before waiting (serving new pod IPs, reading the Lease). */
  afterTick(): Promise<void>;
}

export interface SettleStats {
  ticks: number;
  /** Ticks whose quiet deadline passed (the step was judged anyway). */
  unsettled: number;
  /** Real ms spent waiting for quiet, and the part of it a probe was in flight (hanging pods). */
  quietMs: number;
  probeWaitMs: number;
}

export async function advance(d: SettleDeps, ms: number, stats: SettleStats): Promise<void> {
  const ticks = Math.max(1, Math.ceil(ms / TICK_MS));
  for (let i = 0; i < ticks; i++) {
    await moveClock(d.clock, Math.min(TICK_MS, ms - i * TICK_MS));
    stats.ticks++;
    await d.afterTick();
    if (!(await waitQuiet(d, stats))) stats.unsettled++;
    await d.afterTick();
  }
}

async function moveClock(clock: FakeClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += SLICE_MS) {
    clock.advance(Math.min(SLICE_MS, ms - done));
    await new Promise<void>((r) => setImmediate(r));
  }
}

/** Waits until nothing moves; false when the deadline passed first. */
export async function waitQuiet(d: SettleDeps, stats: SettleStats): Promise<boolean> {
  const began = realNow();
  const deadline = began + QUIET_DEADLINE_MS;
  let last = "";
  let same = 0;
  let quiet = false;
  while (!quiet && realNow() < deadline) {
    const t = realNow();
    const probing = d.servers.openRequests() > 0;
    const sig = await signature(d);
    if (sig !== undefined && sig === last) same++;
    else same = 0;
    last = sig ?? "";
    quiet = same >= QUIET_POLLS;
    if (!quiet) await new Promise<void>((r) => setTimeout(r, POLL_MS));
    if (probing) stats.probeWaitMs += realNow() - t;
  }
  stats.quietMs += realNow() - began;
  return quiet;
}

/** A fingerprint of activity, or undefined while something is visibly in progress. */
async function signature(d: SettleDeps): Promise<string | undefined> {
  if (d.servers.openRequests() > 0) return undefined;
  const parts: string[] = [String(d.requestLog.length), String(d.servers.hits.length)];
  for (const r of d.fleet.live()) {
    // A replica still syncing may be waiting on a fake-clock backoff: it counts as quiet when nothing moves.
    if (!r.isReady()) {
      parts.push("syncing");
      continue;
    }
    const { adds, done } = await r.queueCounts();
    if (adds !== done) return undefined;
    parts.push(`${adds}`);
  }
  return parts.join("/");
}
