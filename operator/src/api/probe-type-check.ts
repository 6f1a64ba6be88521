// The operator's own check of the spec.probe.type rules, as the CRD's CEL rules state them.
import type { z } from "zod";
import { CROSS_FIELD_RULES, fail } from "./cross-field-rules.js";
import { GRPC_RESERVED_HEADERS, GRPC_RESERVED_HEADER_PREFIX, PROBE_TYPE_FIELDS } from "./probe-type-rules.js";

export interface ProbeInput {
  type: string;
  scheme: string;
  path?: string | undefined;
  headers?: Array<{ name: string }> | undefined;
  timeoutSeconds: number;
  match: { maxLatencyMilliseconds?: number | undefined };
}

/** The rules of spec.probe.type, as the CRD's CEL rules state them (probe-type-rules.ts). */
export function checkProbeType(p: ProbeInput, ctx: z.RefinementCtx): void {
  for (const [name, f] of Object.entries(PROBE_TYPE_FIELDS) as Array<
    [keyof typeof PROBE_TYPE_FIELDS, (typeof PROBE_TYPE_FIELDS)[keyof typeof PROBE_TYPE_FIELDS]]
  >) {
    const value = f.path.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], p);
    if (value !== undefined && !(f.types as readonly string[]).includes(p.type)) fail(ctx, [...f.path], value, name);
  }
  if (p.type === "HTTP" && p.path === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["path"],
      message: `Required value: ${CROSS_FIELD_RULES.pathRequiredForHttp.message}`,
      params: { formatted: true },
    });
  }
  if (p.type === "TCP" && p.scheme !== "HTTP") fail(ctx, ["scheme"], p.scheme, "tcpWithoutTls");
  const reserved = (n: string) =>
    (GRPC_RESERVED_HEADERS as readonly string[]).includes(n.toLowerCase()) ||
    n.toLowerCase().startsWith(GRPC_RESERVED_HEADER_PREFIX);
  if (p.type === "GRPC" && (p.headers ?? []).some((h) => reserved(h.name)))
    fail(
      ctx,
      ["headers"],
      (p.headers ?? []).map((h) => h.name),
      "grpcHeadersNotReserved",
    );
  const max = p.match.maxLatencyMilliseconds;
  if (max !== undefined && max >= p.timeoutSeconds * 1000)
    fail(ctx, ["match", "maxLatencyMilliseconds"], max, "maxLatencyBelowTimeout", p);
}
