// Cross-field rules of HealthProbePolicy. Each one is both a CEL rule in the CRD
// (x-kubernetes-validations at `scope`) and a check in the zod schema (policy-schema.ts),
// with the same message.
import type { z } from "zod";
import { PROBE_TYPE_RULES } from "./probe-type-rules.js";

export interface CrossFieldRule {
  /** Where the rule sits, as a path from the root; "[*]" stands for every list item. */
  scope: string;
  /** CEL, evaluated with `self` bound to the value at scope (after defaulting). */
  rule: string;
  /** The field reported, relative to scope (Kubernetes' `fieldPath`); absent: scope itself. */
  fieldPath?: string;
  message: string;
  /**
   * CEL (`self` as for `rule`) that words the refusal with the values in it; the API server
   * prints its result instead of `message`. `explain` is the same wording in TypeScript for
   * the operator's own check (a test holds the two alike). Only rules over strings with a
   * maxLength have one: a real kube-apiserver refuses the CRD when the estimated cost of a
   * messageExpression is over budget, and `string()` of an integer is (more than 100x over).
   * Those rules word the values in the operator's check only (`explain`).
   */
  messageExpression?: string;
  explain?: (self: any) => string;
}

/** Header names `headers` may not use, lower case: Host has its own field, the rest would break the framing. */
export const RESERVED_HEADERS = [
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
] as const;

export const CROSS_FIELD_RULES = {
  selectorNotEmpty: {
    scope: "spec.selector",
    rule: "(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",
    message: "must not be empty: set matchLabels or matchExpressions",
  },
  matchLabelKeys: {
    scope: "spec.selector.matchLabels",
    // [.] rather than an escaped dot: CEL string literals have no "\." escape.
    rule: "self.all(k, size(k) <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$'))",
    message: "keys must be label keys ([prefix/]name)",
  },
  selectorValues: {
    scope: "spec.selector.matchExpressions[*]",
    rule: "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)",
    fieldPath: ".values",
    message: "must be non-empty for operators In and NotIn, and empty for Exists and DoesNotExist",
  },
  portValue: {
    scope: "spec.probe.port",
    rule: "type(self) == int ? (self >= 1 && self <= 65535) : (size(self) <= 15 && self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && self.matches('[a-z]') && !self.contains('--'))",
    message:
      "must be a port number 1-65535 or a container port name (at most 15 lowercase letters, digits and '-', with a letter)",
  },
  headerValueXorValueFrom: {
    scope: "spec.probe.headers[*]",
    rule: "has(self.value) != has(self.valueFrom)",
    message: "exactly one of value or valueFrom must be set",
  },
  headerNameNotReserved: {
    scope: "spec.probe.headers[*].name",
    rule: `!(self.lowerAscii() in [${RESERVED_HEADERS.map((h) => `'${h}'`).join(", ")}])`,
    message:
      "must not be Host (use spec.probe.host), Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer or Expect: the prober owns the request framing",
    messageExpression:
      "'header ' + self + ' is reserved: must not be Host (use spec.probe.host), Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer or Expect: the prober owns the request framing'",
  },
  headerNamesUnique: {
    scope: "spec.probe.headers",
    rule: "self.all(h, self.exists_one(o, o.name.lowerAscii() == h.name.lowerAscii()))",
    message: "header names must be unique, ignoring case",
  },
  timeoutWithinPeriod: {
    scope: "spec.probe",
    rule: "self.timeoutSeconds <= self.periodSeconds",
    fieldPath: ".timeoutSeconds",
    message: "must be less than or equal to spec.probe.periodSeconds",
    explain: (p: { timeoutSeconds: number; periodSeconds: number }) =>
      `timeoutSeconds ${p.timeoutSeconds} > periodSeconds ${p.periodSeconds}: must be less than or equal to spec.probe.periodSeconds`,
  },
  noBodyWithHead: {
    scope: "spec.probe",
    // method has no CRD default (it is HTTP's only): absent means GET.
    rule: "!has(self.method) || self.method != 'HEAD' || !has(self.match.bodyContains) || size(self.match.bodyContains) == 0",
    fieldPath: ".match.bodyContains",
    message: "must be empty when spec.probe.method is HEAD: a HEAD response has no body",
  },
  tlsOnlyWithHttps: {
    scope: "spec.probe",
    rule: "!has(self.tls) || self.scheme == 'HTTPS'",
    fieldPath: ".tls",
    message: "may only be set when spec.probe.scheme is HTTPS",
  },
  statusCodeRangeOrdered: {
    scope: "spec.probe.match.statusCodes[*]",
    rule: "size(self) == 3 || self.substring(0, 3) <= self.substring(4)",
    message: "range must be ordered low-high",
    messageExpression: "'range ' + self + ' must be ordered low-high'",
    explain: (c: string) => `range ${c} must be ordered low-high`,
  },
  windowSamples: {
    scope: "spec.evaluation.window",
    rule: "self.successfulSamplesRequired <= self.sampleSize",
    fieldPath: ".successfulSamplesRequired",
    message: "must be less than or equal to spec.evaluation.window.sampleSize",
    explain: (w: { successfulSamplesRequired: number; sampleSize: number }) =>
      `successfulSamplesRequired ${w.successfulSamplesRequired} > sampleSize ${w.sampleSize}: must be less than or equal to spec.evaluation.window.sampleSize`,
  },
  afterRange: {
    scope: "spec.replacement.after",
    rule: "duration(self) >= duration('30s') && duration(self) <= duration('168h')",
    message: "must be between 30s and 168h",
    messageExpression: "'after ' + self + ': must be between 30s and 168h'",
    explain: (a: string) => `after ${a}: must be between 30s and 168h`,
  },
  flapWindowRange: {
    scope: "spec.evaluation.flapQuarantine.window",
    rule: "duration(self) >= duration('10s') && duration(self) <= duration('24h')",
    message: "must be between 10s and 24h",
    messageExpression: "'window ' + self + ': must be between 10s and 24h'",
    explain: (w: string) => `window ${w}: must be between 10s and 24h`,
  },
  flapBackoffRange: {
    scope: "spec.evaluation.flapQuarantine.maxBackoff",
    rule: "duration(self) >= duration('1s') && duration(self) <= duration('24h')",
    message: "must be between 1s and 24h",
    messageExpression: "'maxBackoff ' + self + ': must be between 1s and 24h'",
    explain: (b: string) => `maxBackoff ${b}: must be between 1s and 24h`,
  },
  diagnosticsRetentionRange: {
    scope: "spec.replacement.diagnosticsRetention",
    rule: "duration(self) >= duration('1m') && duration(self) <= duration('720h')",
    message: "must be between 1m and 720h",
    messageExpression: "'diagnosticsRetention ' + self + ': must be between 1m and 720h'",
    explain: (a: string) => `diagnosticsRetention ${a}: must be between 1m and 720h`,
  },
  dailyAtLeastHourly: {
    scope: "spec.replacement",
    // has(): kube-apiserver checks the rule against the parent's `default: {}` before nested defaults fill it in.
    rule: "!has(self.maxPerDay) || !has(self.maxPerHour) || self.maxPerDay >= self.maxPerHour",
    fieldPath: ".maxPerDay",
    message: "must be greater than or equal to spec.replacement.maxPerHour",
    explain: (r: { maxPerDay: number; maxPerHour: number }) =>
      `maxPerDay ${r.maxPerDay} < maxPerHour ${r.maxPerHour}: must be greater than or equal to spec.replacement.maxPerHour`,
  },
  serviceNameForEndpointSlice: {
    scope: "spec",
    // has(): the API server checks the rule before nested defaults fill drain in; no method means EndpointSlice.
    rule: "has(self.serviceName) || (has(self.drain) && has(self.drain.method) && self.drain.method == 'ReadinessGate')",
    fieldPath: ".serviceName",
    message:
      "must be set when spec.drain.method is EndpointSlice (the default): the operator writes that Service's EndpointSlices",
  },
  ...PROBE_TYPE_RULES,
} as const satisfies Record<string, CrossFieldRule>;

export type RuleName = keyof typeof CROSS_FIELD_RULES;

export function cel(...names: RuleName[]) {
  return {
    "x-kubernetes-validations": names.map((n) => {
      const r: CrossFieldRule = CROSS_FIELD_RULES[n];
      return {
        rule: r.rule,
        message: r.message,
        ...(r.messageExpression ? { messageExpression: r.messageExpression } : {}),
        ...(r.fieldPath ? { fieldPath: r.fieldPath } : {}),
      };
    }),
  };
}

/** Kubernetes-style detail for a rejected value: `Invalid value: 61: <why>`. */
export function invalidValue(value: unknown, why: string): string {
  return `Invalid value: ${JSON.stringify(value) ?? "null"}: ${why}`;
}

/** `self` is the value at the rule's scope: a rule with `explain` words the refusal from it. */
export function fail(
  ctx: z.RefinementCtx,
  path: Array<string | number>,
  value: unknown,
  rule: RuleName,
  self?: unknown,
): void {
  const r: CrossFieldRule = CROSS_FIELD_RULES[rule];
  const why = r.explain && self !== undefined ? r.explain(self) : r.message;
  ctx.addIssue({ code: "custom", path, message: invalidValue(value, why), params: { formatted: true } });
}
