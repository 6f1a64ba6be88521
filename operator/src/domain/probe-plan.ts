import type { ProbeSpec } from "../api/policy-schema.js";
import { parseStatusCodes } from "../api/status-codes.js";
import { resolveProbePort, type ContainerPorts } from "./probe-port.js";
import type { ProbeJudgement, ProbeRequest } from "./probe-request.js";

export interface SecretRef {
  name: string;
  key: string;
}

/** A pod's Secret data by reference (decoded bytes), or undefined when the Secret or key is missing. */
export type SecretLookup = (ref: SecretRef) => Uint8Array | undefined;

/**
 * Why a pod cannot be probed: its named port does not resolve (that pod's problem: it is a
 * target routed as Unknown), or a Secret or key the probe needs is missing (the policy's
 * problem, Ready=False reason SecretNotFound, not InvalidSpec: the spec is valid), or the
 * Secret does not allow this policy (SecretNotPermitted, see probe-access.ts), or the API server
 * refuses the operator the Secret (SecretForbidden: its RBAC lacks get on secrets).
 */
export type ProbePlanProblem = "PortNotResolved" | "SecretNotFound" | "SecretNotPermitted" | "SecretForbidden";

/** Every Secret reference of spec.probe, in field order, with the field that names it. */
export function secretRefsOf(probe: ProbeSpec): Array<{ field: string; ref: SecretRef }> {
  const out: Array<{ field: string; ref: SecretRef }> = [];
  for (const [i, h] of (probe.headers ?? []).entries()) {
    const ref = h.value === undefined ? h.valueFrom?.secretKeyRef : undefined;
    if (ref) out.push({ field: `spec.probe.headers[${i}].valueFrom.secretKeyRef`, ref });
  }
  if (probe.signature) out.push({ field: "spec.probe.signature.secretRef", ref: probe.signature.secretRef });
  return out;
}

export interface ProbePlanFailure {
  ok: false;
  reason: ProbePlanProblem;
  field: string;
  message: string;
}

export interface PlannedProbe {
  request: ProbeRequest;
  judgement: ProbeJudgement;
  periodMs: number;
}

/**
 * Turns a validated spec.probe and one pod into what the scheduler runs. Secret values are
 * resolved here; errors name the field and never carry a secret value.
 */
export function planProbe(
  probe: ProbeSpec,
  pod: { ip: string; containers: ContainerPorts[] },
  secrets: SecretLookup,
): { ok: true; probe: PlannedProbe } | ProbePlanFailure {
  const port = resolveProbePort(probe.port, pod.containers);
  if ("error" in port) return { ok: false, reason: "PortNotResolved", field: "spec.probe.port", message: port.error };
  const headers: ProbeRequest["headers"] = [];
  const decoder = new TextDecoder();
  for (const [i, h] of (probe.headers ?? []).entries()) {
    if (h.value !== undefined) {
      headers.push({ name: h.name, value: h.value });
      continue;
    }
    const ref = h.valueFrom?.secretKeyRef;
    const bytes = ref ? secrets(ref) : undefined;
    if (!ref || !bytes) {
      return {
        ok: false,
        reason: "SecretNotFound",
        field: `spec.probe.headers[${i}].valueFrom.secretKeyRef`,
        message: missing(ref),
      };
    }
    headers.push({ name: h.name, value: decoder.decode(bytes) });
  }
  const request: ProbeRequest = {
    scheme: probe.scheme,
    address: pod.ip,
    port: port.port,
    path: probe.path ?? "",
    method: probe.method,
    headers,
  };
  if (probe.type !== "HTTP") request.type = probe.type;
  if (probe.type === "GRPC") request.grpcService = probe.grpc?.service ?? "";
  if (probe.host) request.host = probe.host;
  if (probe.scheme === "HTTPS" && probe.tls?.caBundle) request.caBundle = probe.tls.caBundle;
  if (probe.signature) {
    const key = secrets(probe.signature.secretRef);
    if (!key)
      return {
        ok: false,
        reason: "SecretNotFound",
        field: "spec.probe.signature.secretRef",
        message: missing(probe.signature.secretRef),
      };
    request.signatureKey = key;
  }
  const judgement: ProbeJudgement = {
    timeoutMs: probe.timeoutSeconds * 1000,
    statusCodes: parseStatusCodes(probe.match.statusCodes),
  };
  if (probe.match.bodyContains) judgement.bodyContains = probe.match.bodyContains;
  if (probe.match.maxLatencyMilliseconds !== undefined) judgement.maxLatencyMs = probe.match.maxLatencyMilliseconds;
  return { ok: true, probe: { request, judgement, periodMs: probe.periodSeconds * 1000 } };
}

function missing(ref: SecretRef | undefined): string {
  return ref ? `key ${JSON.stringify(ref.key)} of Secret ${JSON.stringify(ref.name)} not found` : "Required value";
}
