// Diagnostics before a replacement, as a controller part: capture (just before an eviction, with a
// hard deadline, never failing the replacement) and retention (level-based, from the cache of the
// ConfigMaps it wrote: expired or excess ones deleted, the rest listed in status).
import { formatInstant } from "../domain/budget.js";
import {
  ANNOTATION_CAPTURED_AT,
  ANNOTATION_POD_NAME,
  LOG_BUDGET_BYTES,
  LOG_TAIL_LINES,
  buildDiagnosticsConfigMap,
  diagnosticsConfigMapName,
  type CapturedEvent,
  type CapturedLog,
  type DiagnosticsCapture,
} from "../domain/diagnostics.js";
import { planDiagnosticsRetention, type StoredDiagnostics } from "../domain/diagnostics-retention.js";
import type { StatusDiagnostics } from "../domain/status.js";
import { toRfc3339 } from "../domain/status-time.js";
import { formatDuration, parseDuration } from "../api/duration.js";
import { API_VERSION, KIND } from "../api/group.js";
import type { DiagnosticsConfigMapBody, PodSnapshot } from "../adapters/diagnostics-api.js";
import type { HealthStore } from "../runtime/health-store.js";
import type { Logger } from "../runtime/logger.js";
import { nameOf, timeOf, uidOf, type KubeObject, type ObjectCache, type PodObject } from "./kube-objects.js";
import type { ParsedPolicy } from "./parsed-policy.js";

/** The whole capture, reads and the ConfigMap write together, never takes longer than this. */
export const CAPTURE_TIMEOUT_MS = 5_000;
/** Reads stop at this share of the deadline, so the ConfigMap write has the rest. */
const READ_SHARE = 0.8;
/** A retention delete that failed is tried again after this. */
const RETRY_MS = 10_000;

export interface DiagnosticsPort {
  readPod(namespace: string, name: string, signal: AbortSignal): Promise<PodSnapshot>;
  readLog(
    namespace: string,
    name: string,
    container: string,
    opts: { previous: boolean; tailLines: number; limitBytes: number },
    signal: AbortSignal,
  ): Promise<string>;
  listPodEvents(namespace: string, uid: string, signal: AbortSignal): Promise<CapturedEvent[]>;
  createConfigMap(namespace: string, cm: DiagnosticsConfigMapBody, signal: AbortSignal): Promise<"created" | "exists">;
  deleteConfigMap(namespace: string, name: string, uid: string): Promise<void>;
  /** How a failed call is worded in the summary and the Event. */
  describeFailure(err: unknown): string;
}

export interface DiagnosticsOptions {
  api: DiagnosticsPort;
  /** The diagnostics ConfigMaps (labelled healthprobe.io/policy), metadata only. */
  configMaps: ObjectCache<KubeObject>;
  pods: ObjectCache<PodObject>;
  health: Pick<HealthStore, "get" | "target">;
  timeoutMs?: number;
}

/** What a capture kept: the ConfigMap (absent when nothing could be stored) and what it could not read. */
export interface DiagnosticsOutcome {
  configMap?: string;
  problems: string[];
}

export class Diagnostics {
  constructor(private readonly o: DiagnosticsOptions) {}

  /** Captures the pod's evidence into a ConfigMap; never throws, and returns within the deadline. Undefined when keepDiagnostics is off. */
  async capture(
    log: Logger,
    policy: ParsedPolicy,
    pod: { name: string; uid: string },
    now: number,
  ): Promise<DiagnosticsOutcome | undefined> {
    if (!policy.spec.replacement.keepDiagnostics) return undefined;
    const ns = policy.obj.metadata.namespace;
    const name = diagnosticsConfigMapName(policy.obj.metadata.name, pod.name, pod.uid);
    // A retried replacement of the same pod (a PodDisruptionBudget refusal) keeps its first capture.
    if (this.o.configMaps.get(ns, name)) return { configMap: name, problems: [] };
    const timeoutMs = this.o.timeoutMs ?? CAPTURE_TIMEOUT_MS;
    // Real time, not the operator's clock: a deadline on sockets, like the prober's timeout.
    const reads = AbortSignal.timeout(Math.floor(timeoutMs * READ_SHARE));
    const all = AbortSignal.timeout(timeoutMs);
    const capture = await this.read(policy, pod, now, reads);
    const cm = buildDiagnosticsConfigMap(capture);
    try {
      await this.o.api.createConfigMap(ns, cm, all);
    } catch (err) {
      const problems = [`storing ConfigMap ${name}: ${this.o.api.describeFailure(err)}`, ...cm.problems];
      log.warn({ pod: pod.name, problems }, "diagnostics not kept");
      return { problems };
    }
    if (cm.problems.length > 0)
      log.warn({ pod: pod.name, configMap: name, problems: cm.problems }, "diagnostics incomplete");
    return { configMap: name, problems: cm.problems };
  }

  /** The pod, its Events and its logs, read side by side until the signal ends them. */
  private async read(
    policy: ParsedPolicy,
    pod: { name: string; uid: string },
    now: number,
    signal: AbortSignal,
  ): Promise<DiagnosticsCapture> {
    const ns = policy.obj.metadata.namespace;
    const readMs = Math.floor((this.o.timeoutMs ?? CAPTURE_TIMEOUT_MS) * READ_SHARE);
    const fail = (err: unknown) =>
      signal.aborted ? `timed out after ${formatDuration(readMs)}` : this.o.api.describeFailure(err);
    const [snapshot, events] = await Promise.allSettled([
      this.o.api.readPod(ns, pod.name, signal),
      this.o.api.listPodEvents(ns, pod.uid, signal),
    ]);
    const logs = await this.readLogs(
      ns,
      pod.name,
      snapshot.status === "fulfilled" ? snapshot.value : undefined,
      signal,
      fail,
    );
    const h = this.o.health.get(policy.key, pod.uid);
    const c: DiagnosticsCapture = {
      policy: {
        name: policy.obj.metadata.name,
        uid: policy.obj.metadata.uid ?? "",
        apiVersion: policy.obj.apiVersion ?? API_VERSION,
        kind: policy.obj.kind ?? KIND,
      },
      pod,
      capturedAt: now,
      verdict:
        h?.unhealthySince !== undefined
          ? `Unhealthy since ${formatInstant(h.unhealthySince)} (${h.stateResult ?? "no result"}), replaced after ${policy.spec.replacement.after}`
          : `${h?.state ?? "Unknown"}`,
      logs,
      probe: this.o.health.target(policy.key, pod.uid) as Record<string, unknown> | undefined,
    };
    if (snapshot.status === "fulfilled") c.podStatus = snapshot.value.status;
    else c.podError = fail(snapshot.reason);
    if (events.status === "fulfilled") c.events = events.value;
    else c.eventsError = fail(events.reason);
    return c;
  }

  private async readLogs(
    ns: string,
    name: string,
    snapshot: PodSnapshot | undefined,
    signal: AbortSignal,
    fail: (err: unknown) => string,
  ): Promise<CapturedLog[]> {
    // Without a fresh read, the cached pod still names its containers (restart counts unknown: no previous logs).
    const containers =
      snapshot?.containers ??
      (this.o.pods.get(ns, name)?.spec?.containers ?? []).map((c) => c.name ?? "").filter((c) => c !== "");
    const wanted = containers.flatMap((container) =>
      (snapshot?.restarts.get(container) ?? 0) > 0
        ? [
            { container, previous: false },
            { container, previous: true },
          ]
        : [{ container, previous: false }],
    );
    const opts = { tailLines: LOG_TAIL_LINES, limitBytes: LOG_BUDGET_BYTES };
    const results = await Promise.allSettled(
      wanted.map((w) => this.o.api.readLog(ns, name, w.container, { ...opts, previous: w.previous }, signal)),
    );
    return wanted.map((w, i) => {
      const r = results[i]!;
      return r.status === "fulfilled" ? { ...w, text: r.value } : { ...w, error: fail(r.reason) };
    });
  }

  /**
   * Plans retention from the cache and, on the leader, deletes what the plan says. Returns what
   * status lists and when to look again (the next expiry, or a retry after a failed delete).
   */
  async retain(
    log: Logger,
    policy: ParsedPolicy,
    now: number,
    apply: boolean,
  ): Promise<{ diagnostics: StatusDiagnostics[]; requeueAt?: number }> {
    const ns = policy.obj.metadata.namespace;
    const items = this.o.configMaps
      .list(ns)
      .filter((cm) =>
        (cm.metadata?.ownerReferences ?? []).some((r) => r.uid === policy.obj.metadata.uid && r.kind === KIND),
      )
      .map(storedOf);
    const plan = planDiagnosticsRetention({
      items,
      now,
      retentionMs: parseDuration(policy.spec.replacement.diagnosticsRetention),
    });
    let requeueAt = plan.requeueAt;
    if (apply) {
      for (const d of plan.delete) {
        try {
          await this.o.api.deleteConfigMap(ns, d.name, d.uid);
          log.info({ configMap: d.name, pod: d.pod, reason: d.reason }, "diagnostics deleted");
        } catch (err) {
          log.warn(
            { configMap: d.name, err: this.o.api.describeFailure(err) },
            "deleting diagnostics failed; retrying",
          );
          requeueAt = Math.min(requeueAt ?? Infinity, now + RETRY_MS);
        }
      }
    }
    const diagnostics = plan.keep.map((k) => ({ pod: k.pod, configMap: k.name, time: toRfc3339(k.capturedAt) }));
    return requeueAt === undefined ? { diagnostics } : { diagnostics, requeueAt };
  }
}

function storedOf(cm: KubeObject): StoredDiagnostics {
  const at = timeOf(cm.metadata?.annotations?.[ANNOTATION_CAPTURED_AT]) ?? timeOf(cm.metadata?.creationTimestamp) ?? 0;
  return {
    name: nameOf(cm),
    uid: uidOf(cm),
    pod: cm.metadata?.annotations?.[ANNOTATION_POD_NAME] ?? nameOf(cm),
    capturedAt: at,
  };
}
