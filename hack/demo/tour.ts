// The scripted tour: each step changes what some demo pods answer, narrates it, and then
// waits (with a deadline) until the expected effect is visible in the API — EndpointSlices,
// the policy's status and conditions, Events, pods — never in the operator's logs. Every
// snapshot is also checked against the safety rules (the drain cap, the hourly budget), so
// a violation fails the tour at once.
import { findCondition } from "../../operator/src/domain/conditions.js";
import type { Obj } from "../../test/support/kube-objects.js";
import type { Snapshot } from "./snapshot.js";
import { endpointReadiness, eventTime, formatDuration, orderedPods, toMs } from "./view.js";

export interface TourDriver {
  snapshot(): Promise<Snapshot>;
  breakPod(name: string): void;
  healPod(name: string): void;
}

export interface TourOptions {
  /** Receives each narration line. */
  say(line: string): void;
  now?: () => number;
  /** Between two reads of the API while waiting for an effect. */
  pollMs?: number;
  /** Deadline of a step whose effect needs a few probe periods. */
  stepTimeoutMs?: number;
  /** Stops the tour early (e.g. the user quit). */
  signal?: AbortSignal;
}

export interface TourResult {
  passed: boolean;
  stepsPassed: number;
  steps: number;
  elapsedMs: number;
  failure?: string;
}

type Verdict = { ok: true; evidence: string } | { ok: false; waitingFor: string };

const ok = (evidence: string): Verdict => ({ ok: true, evidence });
const waiting = (waitingFor: string): Verdict => ({ ok: false, waitingFor });

// ---------------------------------------------------------------------------------------
// Reading a snapshot.

const statusOf = (s: Snapshot): Record<string, any> => s.policy?.status ?? {};
const statusPod = (s: Snapshot, name: string): Record<string, any> | undefined =>
  (statusOf(s).pods ?? []).find((p: { name: string }) => p.name === name);
const condition = (s: Snapshot, type: string) => findCondition(statusOf(s).conditions, type);
const livePods = (s: Snapshot): Obj[] => orderedPods(s).filter((p) => !p.metadata?.deletionTimestamp);
const podNamed = (s: Snapshot, name: string): Obj | undefined => s.pods.find((p) => p.metadata?.name === name);

/** Events with this reason about this pod (or the policy), observed at or after `since`. */
function eventsSince(s: Snapshot, reason: string, since: number, regarding?: string): Obj[] {
  return s.events.filter((e) => {
    if (e.reason !== reason) return false;
    if (regarding !== undefined && e.regarding?.name !== regarding) return false;
    // events.k8s.io times are microseconds; status times are seconds: allow for the rounding.
    return eventTime(e) >= since - 1000;
  });
}

/** The safety rules, checked on every snapshot: a violation ends the tour. */
export function checkSafety(s: Snapshot): string | undefined {
  const st = statusOf(s);
  const percent = s.policy?.spec?.drain?.maxUnhealthyPercent ?? 50;
  const targets = st.targets ?? 0;
  const cap = Math.floor((targets * percent) / 100);
  if ((st.drained ?? 0) > cap)
    return `status.drained=${st.drained} exceeds floor(${targets} × ${percent} / 100) = ${cap}`;
  const ready = endpointReadiness(s);
  const readyCount = [...ready.values()].filter(Boolean).length;
  if (targets > 0 && ready.size > 0 && readyCount === 0)
    return "no endpoint of the Service is ready: the Service went dark";
  const hour = s.at - 3_600_000;
  const replaced = (st.replacements ?? []).filter((r: { time: string }) => (toMs(r.time) ?? 0) > hour).length;
  const maxPerHour = s.policy?.spec?.replacement?.maxPerHour ?? 1;
  if (replaced > maxPerHour) return `${replaced} replacements in the last hour, maxPerHour is ${maxPerHour}`;
  return undefined;
}

// ---------------------------------------------------------------------------------------
// The steps.

interface Cast {
  /** The five pods at the start, oldest first. */
  p: string[];
  /** Drained in step 2 alongside p[0]; stays sick until the end. */
  second?: string;
  /** Kept in rotation by the cap in step 2. */
  kept?: string;
  replaceAfter?: number;
}

interface Step {
  title: string;
  /** Changes the pods; returns what it did, for the narration. */
  act(cast: Cast, d: TourDriver, s: Snapshot): string;
  check(s: Snapshot, cast: Cast, since: number): Verdict;
  timeoutMs?(cast: Cast, now: number): number;
}

const names = (xs: readonly string[]) => xs.join(", ");

const steps: Step[] = [
  {
    title: "One pod fails: it is drained",
    act: ({ p }, d) => {
      d.breakPod(p[0]!);
      return `${p[0]} now answers HTTP 503`;
    },
    check: (s, { p }, since) => {
      const sp = statusPod(s, p[0]!);
      const ready = endpointReadiness(s);
      if (sp?.state !== "Unhealthy" || !sp.drained) return waiting(`${p[0]} to be Unhealthy and drained in status`);
      if (ready.get(p[0]!) !== false) return waiting(`${p[0]}'s endpoint to be ready=false`);
      const others = p.slice(1).filter((n) => ready.get(n) !== true);
      if (others.length > 0) return waiting(`${names(others)} to stay in rotation`);
      const ev = eventsSince(s, "Drained", since, p[0]);
      if (ev.length === 0) return waiting(`a Drained Event for ${p[0]}`);
      return ok(
        `${p[0]} is Unhealthy (${sp.lastResult}) and out of rotation: EndpointSlice ready=false, status.drained=${statusOf(s).drained}; Event Drained: "${ev[0]!.note}"`,
      );
    },
  },
  {
    title: "Two more fail: the cap keeps one in rotation",
    act: ({ p }, d) => {
      d.breakPod(p[1]!);
      d.breakPod(p[2]!);
      return `${p[1]} and ${p[2]} now answer HTTP 503 too`;
    },
    check: (s, cast, since) => {
      const { p } = cast;
      const st = statusOf(s);
      const ready = endpointReadiness(s);
      if (st.unhealthy !== 3) return waiting(`3 pods Unhealthy in status (now ${st.unhealthy})`);
      const drained = p.slice(0, 3).filter((n) => ready.get(n) === false);
      const kept = p.slice(1, 3).filter((n) => ready.get(n) === true);
      if (drained.length !== 2 || !drained.includes(p[0]!) || kept.length !== 1)
        return waiting(`${p[0]} and one of ${p[1]}, ${p[2]} to be drained, the other kept in rotation`);
      const capped = condition(s, "DrainCapped");
      if (capped?.status !== "True") return waiting("DrainCapped=True");
      if (eventsSince(s, "DrainCapped", since).length === 0) return waiting("a DrainCapped Event");
      cast.kept = kept[0]!;
      cast.second = drained.find((n) => n !== p[0])!;
      return ok(
        `3 of 5 Unhealthy, at most floor(5 × 50 / 100) = 2 drained: ${names(drained)} (longest unhealthy first); ${cast.kept} stays in rotation. DrainCapped=True: ${capped.message}`,
      );
    },
  },
  {
    title: "All five fail: the Service fails open",
    act: ({ p }, d) => {
      d.breakPod(p[3]!);
      d.breakPod(p[4]!);
      return `${p[3]} and ${p[4]} now answer HTTP 503: no pod is healthy`;
    },
    check: (s, { p }, since) => {
      const failOpen = condition(s, "FailOpen");
      const ready = endpointReadiness(s);
      if (failOpen?.status !== "True") return waiting("FailOpen=True");
      const out = p.filter((n) => ready.get(n) !== true);
      if (out.length > 0) return waiting(`${names(out)} back in rotation`);
      if ((statusOf(s).drained ?? 0) !== 0) return waiting("status.drained=0");
      if (eventsSince(s, "FailOpen", since).length === 0) return waiting("a FailOpen Event");
      return ok(
        `nothing is drained: all 5 endpoints are ready, so the Service keeps serving. FailOpen=True: ${failOpen.message}`,
      );
    },
  },
  {
    title: "Three recover, two stay sick: they are drained again",
    act: (cast, d) => {
      const healed = [cast.kept!, cast.p[3]!, cast.p[4]!];
      for (const n of healed) d.healPod(n);
      return `${names(healed)} answer HTTP 200 again; ${cast.p[0]} and ${cast.second} still answer 503`;
    },
    check: (s, cast) => {
      const st = statusOf(s);
      const ready = endpointReadiness(s);
      const healed = [cast.kept!, cast.p[3]!, cast.p[4]!];
      if (st.healthy !== 3 || st.unhealthy !== 2)
        return waiting(`3 Healthy and 2 Unhealthy in status (now ${st.healthy} and ${st.unhealthy})`);
      if (condition(s, "FailOpen")?.status === "True") return waiting("FailOpen to end");
      const notIn = healed.filter((n) => ready.get(n) !== true);
      if (notIn.length > 0) return waiting(`${names(notIn)} in rotation`);
      const sick = [cast.p[0]!, cast.second!];
      if (sick.some((n) => ready.get(n) !== false)) return waiting(`${names(sick)} drained`);
      return ok(
        `${names(healed)} are Healthy and in rotation; ${names(sick)} are drained (2 of the 2 maxUnhealthyPercent=50 allows). FailOpen=${condition(s, "FailOpen")?.status}`,
      );
    },
  },
  {
    title: "A pod stays sick past its window: it is replaced",
    act: (cast, _d, s) => {
      const sp = statusPod(s, cast.p[0]!);
      cast.replaceAfter = toMs(sp?.replaceAfter);
      const since = toMs(sp?.unhealthySince);
      if (cast.replaceAfter === undefined || since === undefined)
        return `${cast.p[0]} has no replaceAfter in status yet`;
      return `${cast.p[0]} has been Unhealthy for ${formatDuration(s.at - since)}; its window (after: 60s) ends in ${formatDuration(cast.replaceAfter - s.at)}`;
    },
    timeoutMs: (cast, now) => Math.max(0, (cast.replaceAfter ?? now) - now) + 60_000,
    check: (s, cast) => {
      const gone = cast.p[0]!;
      const pod = podNamed(s, gone);
      const st = statusOf(s);
      const record = (st.replacements ?? []).find((r: { pod: string }) => r.pod === gone);
      if (!record) return waiting(`${gone} in status.replacements`);
      if (pod && !pod.metadata?.deletionTimestamp) return waiting(`${gone} to be terminating or gone`);
      const ev = eventsSince(s, "Replaced", 0, gone);
      if (ev.length === 0) return waiting(`a Replaced Event for ${gone}`);
      const fresh = livePods(s).filter((x) => !cast.p.includes(String(x.metadata?.name)));
      if (fresh.length !== 1) return waiting("the ReplicaSet's new pod");
      const newName = String(fresh[0]!.metadata?.name);
      if (statusPod(s, newName)?.state !== "Healthy" || endpointReadiness(s).get(newName) !== true)
        return waiting(`${newName} Healthy and in rotation`);
      if (st.targets !== 5) return waiting("5 targets again");
      const late =
        cast.replaceAfter !== undefined
          ? ` (${formatDuration((toMs(record.time) ?? 0) - cast.replaceAfter)} after its window ended)`
          : "";
      return ok(
        `${gone} was evicted at ${String(record.time).slice(11, 19)}${late} — Event Replaced: "${ev[0]!.note}"; the ReplicaSet created ${newName}, now Healthy and in rotation. status.replacedInLastDay=${st.replacedInLastDay}`,
      );
    },
  },
  {
    title: "The next one is held by the hourly budget",
    act: (cast, _d, s) => {
      const sp = statusPod(s, cast.second!);
      cast.replaceAfter = toMs(sp?.replaceAfter);
      if (cast.replaceAfter === undefined) return `${cast.second} has no replaceAfter in status yet`;
      return `${cast.second}'s window ends in ${formatDuration(cast.replaceAfter - s.at)}; maxPerHour is 1 and this hour's replacement is spent`;
    },
    timeoutMs: (cast, now) => Math.max(0, (cast.replaceAfter ?? now) - now) + 45_000,
    check: (s, cast) => {
      const name = cast.second!;
      if (cast.replaceAfter === undefined || s.at < cast.replaceAfter) return waiting(`${name}'s window to end`);
      const pod = podNamed(s, name);
      if (!pod || pod.metadata?.deletionTimestamp)
        return waiting(`${name} to stay running (it was replaced: the budget did not hold)`);
      const blocked = condition(s, "ReplacementBlocked");
      if (blocked?.status !== "True" || blocked.reason !== "Budget")
        return waiting("ReplacementBlocked=True with reason Budget");
      // The condition may have turned True before this step began (while the new pod started).
      const event = eventsSince(s, "ReplacementBlocked", 0).at(-1);
      if (!event) return waiting("a ReplacementBlocked Event");
      // The budget is said once, with the next slot in whole seconds; the Event adds how far off it was.
      const slot = "next slot \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ";
      if (
        !new RegExp(
          `^1 due replacement is waiting\\. ${name}: hourly budget of policy demo/web used 1/1, ${slot}$`,
        ).test(blocked.message)
      ) {
        return waiting(`the condition to name the spent budget once, in whole seconds (it says "${blocked.message}")`);
      }
      if (!/next slot in \S+ \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$/.test(String(event.note)))
        return waiting(`the Event to say when the slot frees (it says "${event.note}")`);
      const replaced = (statusOf(s).replacements ?? []).length;
      return ok(
        `${name} is past its window but still running and drained; ${replaced} replacement in the ledger. ReplacementBlocked=True (Budget): ${blocked.message} — Event: "${event.note}"`,
      );
    },
  },
  {
    title: "Every pod fails while it is due: the mass-failure breaker pauses replacement",
    act: (cast, d, s) => {
      const rest = livePods(s)
        .map((x) => String(x.metadata?.name))
        .filter((n) => n !== cast.second);
      for (const n of rest) d.breakPod(n);
      return `${names(rest)} now answer HTTP 503 too (key a): all 5 fail, ${cast.second} is past its window`;
    },
    check: (s, cast, since) => {
      const name = cast.second!;
      const blocked = condition(s, "ReplacementBlocked");
      if (blocked?.status !== "True" || blocked.reason !== "MassFailure")
        return waiting(`ReplacementBlocked=True with reason MassFailure (now ${blocked?.reason})`);
      const share = `5 of 5 targets (100%) are Unhealthy, above pauseAboveUnhealthyPercent=50`;
      if (!blocked.message.includes(`${name}: ${share}`))
        return waiting(`the condition to give the share of 5 of 5 (it says "${blocked.message}")`);
      const pod = podNamed(s, name);
      if (!pod || pod.metadata?.deletionTimestamp)
        return waiting(`${name} to stay running (it was replaced: the breaker did not hold)`);
      const event = eventsSince(s, "ReplacementBlocked", since).find((e) =>
        String(e.note).includes("pauseAboveUnhealthyPercent=50"),
      );
      if (!event) return waiting("a ReplacementBlocked Event naming the breaker");
      return ok(
        `nothing is replaced while more than half the pods fail (a shared cause, not the pods); the Service fails open (FailOpen=${condition(s, "FailOpen")?.status}). ReplacementBlocked=True (MassFailure): ${blocked.message}`,
      );
    },
  },
  {
    title: "All recover: back in rotation, the pause ends by itself",
    act: (_cast, d, s) => {
      const all = livePods(s).map((x) => String(x.metadata?.name));
      for (const n of all) d.healPod(n);
      return `${names(all)} answer HTTP 200 again`;
    },
    check: (s, cast) => {
      const name = cast.second!;
      const st = statusOf(s);
      if (statusPod(s, name)?.state !== "Healthy" || endpointReadiness(s).get(name) !== true)
        return waiting(`${name} Healthy and in rotation`);
      if (st.healthy !== 5) return waiting(`5 Healthy (now ${st.healthy})`);
      const out = livePods(s).filter((x) => endpointReadiness(s).get(String(x.metadata?.name)) !== true);
      if (out.length > 0) return waiting("all 5 endpoints ready");
      if (condition(s, "ReplacementBlocked")?.status === "True") return waiting("ReplacementBlocked to clear");
      if (condition(s, "FailOpen")?.status === "True") return waiting("FailOpen to end");
      return ok(
        `all 5 pods Healthy and in rotation; Degraded=${condition(s, "Degraded")?.status}, ReplacementBlocked=${condition(s, "ReplacementBlocked")?.status}`,
      );
    },
  },
];

export const TOUR_STEPS = steps.length;

// ---------------------------------------------------------------------------------------
// The runner.

export async function runTour(d: TourDriver, o: TourOptions): Promise<TourResult> {
  const now = o.now ?? Date.now;
  const pollMs = o.pollMs ?? 250;
  const stepTimeoutMs = o.stepTimeoutMs ?? 45_000;
  const started = now();
  const stamp = () => `[${((now() - started) / 1000).toFixed(1).padStart(5)}s]`;
  const say = (line: string) => o.say(`${stamp()} ${line}`);
  const fail = (stepsPassed: number, failure: string): TourResult => {
    say(`✗ ${failure}`);
    return { passed: false, stepsPassed, steps: steps.length, elapsedMs: now() - started, failure };
  };

  /** Reads the API until the check passes, the deadline passes or a safety rule breaks; returns the last verdict and snapshot. */
  const observe = async (
    check: (s: Snapshot) => Verdict,
    timeoutMs: number,
  ): Promise<{ verdict: Verdict; snapshot: Snapshot; violation?: string }> => {
    const deadline = now() + timeoutMs;
    for (;;) {
      const s = await d.snapshot();
      const violation = checkSafety(s);
      if (violation) return { verdict: waiting("the safety rules to hold"), snapshot: s, violation };
      const verdict = check(s);
      if (verdict.ok || now() > deadline || o.signal?.aborted) return { verdict, snapshot: s };
      await new Promise((r) => setTimeout(r, pollMs));
    }
  };

  say(
    `Five pods of ReplicaSet demo/web behind the selector-less Service demo/web; policy demo/web probes each every 2s, drains at most 50%, replaces after 60s, at most 1 per hour.`,
  );
  const ready = await observe((s) => {
    const pods = livePods(s);
    const st = statusOf(s);
    const readyAll = endpointReadiness(s);
    if (pods.length !== 5 || st.targets !== 5 || st.healthy !== 5)
      return waiting(`5 pods Healthy in status (now ${st.healthy ?? 0} of ${st.targets ?? 0})`);
    if (pods.some((p) => readyAll.get(String(p.metadata?.name)) !== true))
      return waiting("all 5 endpoints ready in the EndpointSlices");
    return ok("all 5 pods are Healthy and in rotation");
  }, 60_000);
  if (ready.violation) return fail(0, `safety rule broken: ${ready.violation}`);
  if (!ready.verdict.ok) return fail(0, `the demo never became ready: waited for ${ready.verdict.waitingFor}`);
  say(`✓ ${ready.verdict.evidence}`);
  const cast: Cast = { p: livePods(ready.snapshot).map((p) => String(p.metadata?.name)) };

  let last = ready.snapshot;
  for (const [i, step] of steps.entries()) {
    if (o.signal?.aborted) return fail(i, "stopped before the end");
    say(`Step ${i + 1}/${steps.length} · ${step.title}`);
    const since = now();
    say(`  ${step.act(cast, d, last)}`);
    const t0 = now();
    const timeoutMs = step.timeoutMs ? step.timeoutMs(cast, t0) : stepTimeoutMs;
    const r = await observe((s) => step.check(s, cast, since), timeoutMs);
    last = r.snapshot;
    if (r.violation) return fail(i, `step ${i + 1}: safety rule broken: ${r.violation}`);
    if (!r.verdict.ok)
      return fail(
        i,
        `step ${i + 1} (${step.title}): after ${formatDuration(now() - t0)}, still waiting for ${r.verdict.waitingFor}`,
      );
    say(`  ✓ after ${((now() - t0) / 1000).toFixed(1)}s: ${r.verdict.evidence}`);
  }
  const elapsedMs = now() - started;
  say(`Tour passed: ${steps.length} of ${steps.length} steps observed in the API in ${formatDuration(elapsedMs)}.`);
  return { passed: true, stepsPassed: steps.length, steps: steps.length, elapsedMs };
}
