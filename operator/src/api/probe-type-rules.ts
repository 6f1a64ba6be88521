// Cross-field rules of spec.probe.type: which fields each probe type may set, and the latency
// threshold. Part of CROSS_FIELD_RULES (cross-field-rules.ts): each is a CEL rule in the CRD
// and a check in the zod schema, with the same message.
import type { CrossFieldRule } from "./cross-field-rules.js";

export const PROBE_TYPES = ["HTTP", "TCP", "GRPC"] as const;
export type ProbeTypeName = (typeof PROBE_TYPES)[number];

interface TypedField {
  /** Path under spec.probe. */
  path: readonly string[];
  /** The probe types that may set the field. */
  types: readonly ProbeTypeName[];
}

/**
 * Fields that only some probe types use. The CRD gives none of them a default (method and
 * statusCodes get theirs in the operator, for HTTP), so a rule can tell a field the user set.
 */
export const PROBE_TYPE_FIELDS = {
  pathOnlyForHttp: { path: ["path"], types: ["HTTP"] },
  methodOnlyForHttp: { path: ["method"], types: ["HTTP"] },
  statusCodesOnlyForHttp: { path: ["match", "statusCodes"], types: ["HTTP"] },
  bodyContainsOnlyForHttp: { path: ["match", "bodyContains"], types: ["HTTP"] },
  grpcOnlyForGrpc: { path: ["grpc"], types: ["GRPC"] },
  headersNotForTcp: { path: ["headers"], types: ["HTTP", "GRPC"] },
  hostNotForTcp: { path: ["host"], types: ["HTTP", "GRPC"] },
  tlsNotForTcp: { path: ["tls"], types: ["HTTP", "GRPC"] },
  signatureNotForTcp: { path: ["signature"], types: ["HTTP", "GRPC"] },
} as const satisfies Record<string, TypedField>;

function typedFieldRule(f: TypedField): CrossFieldRule {
  const field = f.path.join(".");
  const others = PROBE_TYPES.filter((t) => !f.types.includes(t));
  const allowed =
    f.types.length === 1 ? `self.type == '${f.types[0]}'` : `self.type in [${f.types.map((t) => `'${t}'`).join(", ")}]`;
  const message =
    f.types.length === 1
      ? `may only be set when spec.probe.type is ${f.types[0]}`
      : `may not be set when spec.probe.type is ${others.join(" or ")}: a ${others.join(" or ")} probe only opens a connection and sends nothing`;
  return { scope: "spec.probe", rule: `${allowed} || !has(self.${field})`, fieldPath: `.${field}`, message };
}

const typedFieldRules = Object.fromEntries(
  Object.entries(PROBE_TYPE_FIELDS).map(([name, f]) => [name, typedFieldRule(f)]),
) as Record<keyof typeof PROBE_TYPE_FIELDS, CrossFieldRule>;

/** gRPC metadata names the prober owns (HTTP/2 connection headers are refused for every type). */
export const GRPC_RESERVED_HEADER_PREFIX = "grpc-";
export const GRPC_RESERVED_HEADERS = ["content-type"] as const;

export const PROBE_TYPE_RULES = {
  ...typedFieldRules,
  pathRequiredForHttp: {
    scope: "spec.probe",
    rule: "self.type != 'HTTP' || has(self.path)",
    fieldPath: ".path",
    message: "is required when spec.probe.type is HTTP",
  },
  tcpWithoutTls: {
    scope: "spec.probe",
    rule: "self.type != 'TCP' || self.scheme == 'HTTP'",
    fieldPath: ".scheme",
    message: "must be HTTP (the default) when spec.probe.type is TCP: a TCP probe only opens a connection",
  },
  grpcHeadersNotReserved: {
    scope: "spec.probe",
    rule: "self.type != 'GRPC' || !has(self.headers) || self.headers.all(h, h.name.lowerAscii() != 'content-type' && !h.name.lowerAscii().startsWith('grpc-'))",
    fieldPath: ".headers",
    message: "must not name Content-Type or grpc-* when spec.probe.type is GRPC: the prober owns the gRPC framing",
  },
  maxLatencyBelowTimeout: {
    scope: "spec.probe",
    rule: "!has(self.match.maxLatencyMilliseconds) || self.match.maxLatencyMilliseconds < self.timeoutSeconds * 1000",
    fieldPath: ".match.maxLatencyMilliseconds",
    message: "must be less than spec.probe.timeoutSeconds × 1000",
    explain: (p: { timeoutSeconds: number; match: { maxLatencyMilliseconds?: number } }) =>
      `maxLatencyMilliseconds ${p.match.maxLatencyMilliseconds} >= timeoutSeconds ${p.timeoutSeconds} × 1000: must be less than spec.probe.timeoutSeconds × 1000`,
  },
} satisfies Record<string, CrossFieldRule>;
