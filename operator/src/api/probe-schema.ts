// The probe half of HealthProbePolicy's one schema (policy-schema.ts): which port and how to ask,
// with the building blocks it shares with the rest of the spec (label selectors).
import { z } from "zod";
import { STATUS_CODE_PATTERN, statusCodeProblem } from "./status-codes.js";
import { CROSS_FIELD_RULES, RESERVED_HEADERS, cel, fail } from "./cross-field-rules.js";
import { PROBE_TYPES, PROBE_TYPE_RULES } from "./probe-type-rules.js";
import { checkProbeType } from "./probe-type-check.js";
import { DNS1123_SUBDOMAIN } from "./dns-names.js";
import { desc, intIn, oneOf } from "./schema-helpers.js";

// ---------------------------------------------------------------------------------------
// Building blocks.

const LABEL_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
// RFC 9110 token: the characters an HTTP field name may use.
const HEADER_NAME = /^[-!#$%&'*+.^_`|~0-9A-Za-z]+$/;
// \x00, not \0: the API server's regexp engine (RE2) has no octal escapes.
// eslint-disable-next-line no-control-regex -- excluding control characters is the point
const HEADER_VALUE = /^[^\r\n\x00]*$/;
const HOST = /^([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*(:[0-9]{1,5})?$/;
const PATH = /^\/[^\s]*$/;

const secretKeySelector = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(253)
      .regex(DNS1123_SUBDOMAIN, "must be a Secret name (a DNS subdomain)")
      .meta(desc("Name of a Secret in the policy's namespace.")),
    key: z
      .string()
      .min(1)
      .max(253)
      .regex(SECRET_KEY, "must consist of alphanumeric characters, '-', '_' or '.'")
      .meta(desc("Key within the Secret.")),
  })
  .meta(desc("A key of a Secret in the policy's namespace."));

const labelSelectorRequirement = z
  .strictObject({
    key: z
      .string()
      .min(1)
      .max(317)
      .regex(LABEL_NAME, "must be a label key ([prefix/]name)")
      .meta(desc("The label key the requirement applies to.")),
    operator: oneOf(
      ["In", "NotIn", "Exists", "DoesNotExist"],
      "How the key relates to the values: In, NotIn, Exists or DoesNotExist.",
    ),
    values: z
      .array(z.string().max(63).regex(LABEL_VALUE, "must be a label value").meta(desc("A label value.")))
      .max(64)
      .optional()
      .meta({
        ...desc("Label values: non-empty for In and NotIn, empty for Exists and DoesNotExist."),
        "x-kubernetes-list-type": "atomic",
      }),
  })
  .meta({ ...desc("A label requirement: a key, an operator and values."), ...cel("selectorValues") })
  .superRefine((r, ctx) => {
    const withValues = r.operator === "In" || r.operator === "NotIn";
    const n = r.values?.length ?? 0;
    if (withValues ? n === 0 : n > 0) fail(ctx, ["values"], r.values ?? [], "selectorValues");
  });

export const labelSelectorSchema = z
  .strictObject({
    // Values in the schema, keys by a CEL rule (the CRD cannot constrain map keys otherwise):
    // the API server once took any key and value here (test/conformance/policy-differential.test.ts).
    matchLabels: z
      .record(
        z.string(),
        z
          .string()
          .max(63)
          .regex(LABEL_VALUE, "must be a label value (at most 63 characters: alphanumerics, '-', '_' or '.')"),
      )
      .optional()
      .meta({
        ...desc("Labels a pod must all carry (key: value). ANDed with matchExpressions."),
        maxProperties: 64,
        ...cel("matchLabelKeys"),
      })
      .superRefine((labels, ctx) => {
        const keys = Object.keys(labels ?? {});
        if (keys.length > 64)
          ctx.addIssue({
            code: "custom",
            path: [],
            message: `Too many: ${keys.length}: must have at most 64 items`,
            params: { formatted: true },
          });
        if (keys.some((k) => !LABEL_NAME.test(k) || k.length > 317)) fail(ctx, [], labels, "matchLabelKeys");
      }),
    matchExpressions: z
      .array(labelSelectorRequirement)
      .max(32)
      .optional()
      .meta({
        ...desc("Label requirements a pod must all meet. ANDed with matchLabels."),
        "x-kubernetes-list-type": "atomic",
      }),
  })
  .meta({
    ...desc(
      "The pods behind the Service: a label selector over the pods of the policy's namespace. Must not be empty.",
    ),
    ...cel("selectorNotEmpty"),
  })
  .superRefine((s, ctx) => {
    const empty = Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;
    if (empty) fail(ctx, [], s, "selectorNotEmpty");
  });

const portSchema = z
  .union([z.number(), z.string()], { error: CROSS_FIELD_RULES.portValue.message })
  .meta({
    ...desc(
      "Port to probe on the pod IP: a number 1-65535, or the name of a container port of the pod (resolved per pod).",
    ),
    "x-kubernetes-int-or-string": true,
    // Bounds the string the CEL rule reads, so the API server's cost estimate stays small.
    maxLength: 15,
    ...cel("portValue"),
  })
  .superRefine((p, ctx) => {
    const ok =
      typeof p === "number"
        ? Number.isInteger(p) && p >= 1 && p <= 65535
        : p.length <= 15 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(p) && /[a-z]/.test(p) && !p.includes("--");
    if (!ok) fail(ctx, [], p, "portValue");
  });

const headerSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(256)
      .regex(HEADER_NAME, "must be a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~)")
      .meta({
        ...desc(
          "Header name, e.g. X-Env. Not Host (use host), Content-Length, Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer or Expect.",
        ),
        ...cel("headerNameNotReserved"),
      })
      .superRefine((n, ctx) => {
        if ((RESERVED_HEADERS as readonly string[]).includes(n.toLowerCase()))
          fail(ctx, [], n, "headerNameNotReserved");
      }),
    value: z
      .string()
      .max(4096)
      .regex(HEADER_VALUE, "must not contain line breaks or NUL")
      .optional()
      .meta(desc("Literal header value. Exactly one of value or valueFrom.")),
    valueFrom: z
      .strictObject({ secretKeyRef: secretKeySelector })
      .optional()
      .meta(
        desc(
          "Takes the header value from a Secret, re-read when the Secret changes. Exactly one of value or valueFrom.",
        ),
      ),
  })
  .meta({ ...desc("An extra request header sent with every probe."), ...cel("headerValueXorValueFrom") })
  .superRefine((h, ctx) => {
    if ((h.value !== undefined) === (h.valueFrom !== undefined))
      fail(ctx, [], { name: h.name }, "headerValueXorValueFrom");
  });

const statusCodeSchema = z
  .string()
  .max(7)
  .regex(new RegExp(STATUS_CODE_PATTERN), `must be a status code "NNN" or a range "NNN-NNN" within 100-599`)
  .meta({ ...desc(`A status code ("200") or an inclusive range ("200-399").`), ...cel("statusCodeRangeOrdered") })
  .superRefine((c, ctx) => {
    if (statusCodeProblem(c) === CROSS_FIELD_RULES.statusCodeRangeOrdered.message)
      fail(ctx, [], c, "statusCodeRangeOrdered", c);
  });

const grpcSchema = z
  .strictObject({
    service: z
      .string()
      .max(256)
      .regex(/^[^\s]*$/, "must contain no whitespace")
      .default("")
      .meta(
        desc(
          `The service asked about in grpc.health.v1.Health/Check, e.g. "shop.Cart". Empty (the default): the server's overall health.`,
        ),
      ),
  })
  .meta(desc("gRPC health check settings; only with type GRPC."));

const PROBE_TYPE_RULE_NAMES = Object.keys(PROBE_TYPE_RULES) as Array<keyof typeof PROBE_TYPE_RULES>;

export const probeSchema = z
  .strictObject({
    type: oneOf(
      PROBE_TYPES,
      "HTTP (a request judged by status and body), TCP (success = the connection is accepted, then closed, nothing sent) or GRPC (grpc.health.v1.Health/Check over HTTP/2, success = SERVING).",
    ).default("HTTP"),
    scheme: oneOf(
      ["HTTP", "HTTPS"],
      "HTTP or HTTPS. For type GRPC: HTTP is plaintext HTTP/2 (h2c), HTTPS is TLS (ALPN h2). TCP: HTTP only.",
    ).default("HTTP"),
    port: portSchema,
    path: z
      .string()
      .min(1)
      .max(2048)
      .regex(PATH, `must start with "/" and contain no whitespace`)
      .optional()
      .meta(
        desc(
          `Request path, starting with "/", e.g. /healthz. Required for type HTTP (there is no default), not allowed for the others.`,
        ),
      ),
    method: oneOf(["GET", "HEAD"], "GET (the default) or HEAD. Type HTTP only.").optional(),
    grpc: grpcSchema.optional(),
    host: z
      .string()
      .max(259)
      .regex(HOST, "must be a host name, optionally with :port")
      .optional()
      .meta(
        desc(
          "Host header (gRPC: :authority) and TLS server name (SNI). It never changes where the probe goes: the destination is always the pod IP. Empty: the pod IP. Not for type TCP.",
        ),
      ),
    headers: z
      .array(headerSchema)
      .max(16)
      .optional()
      .meta({
        ...desc("Up to 16 extra request headers (gRPC: metadata); names are unique, ignoring case. Not for type TCP."),
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        ...cel("headerNamesUnique"),
      })
      .superRefine((hs, ctx) => {
        const exact = new Set<string>();
        const folded = new Set<string>();
        let clash = false;
        (hs ?? []).forEach((h, i) => {
          // The API server reports exact repeats of a list-map key this way.
          if (exact.has(h.name))
            ctx.addIssue({
              code: "custom",
              path: [i],
              message: `Duplicate value: ${JSON.stringify({ name: h.name })}`,
              params: { formatted: true },
            });
          if (folded.has(h.name.toLowerCase())) clash = true;
          exact.add(h.name);
          folded.add(h.name.toLowerCase());
        });
        if (clash)
          fail(
            ctx,
            [],
            (hs ?? []).map((h) => h.name),
            "headerNamesUnique",
          );
      }),
    periodSeconds: intIn(1, 3600)
      .default(60)
      .meta(desc("Seconds between two probes of a pod, 1-3600. Probes of one pod never overlap.")),
    timeoutSeconds: intIn(1, 3600)
      .default(60)
      .meta(
        desc(
          "Seconds for a complete response, 1-3600 and at most periodSeconds. No complete response in time is a failure.",
        ),
      ),
    match: z
      .strictObject({
        statusCodes: z
          .array(statusCodeSchema)
          .min(1)
          .max(32)
          .optional()
          .meta({
            ...desc(
              `Status codes that count as success: codes ("200") or ranges ("200-399") within 100-599; default 200-299. Redirects are not followed, so a 3xx is judged like any code. Type HTTP only.`,
            ),
            "x-kubernetes-list-type": "atomic",
          }),
        bodyContains: z
          .string()
          .max(4090)
          .optional()
          .meta(
            desc(
              "A substring the response body must contain, searched in at most the first 64 KiB. Not allowed with method HEAD. Type HTTP only.",
            ),
          ),
        maxLatencyMilliseconds: intIn(1, 3_599_999)
          .optional()
          .meta(
            desc(
              'A probe that passes but takes longer than this is a failure ("slow: 812 ms > 500 ms"): HTTP to the last byte, TCP the connect time, gRPC the whole call. Below timeoutSeconds × 1000.',
            ),
          ),
      })
      .prefault({})
      .meta(desc("What a successful response looks like.")),
    tls: z
      .strictObject({
        caBundle: z
          .string()
          .max(262144)
          .optional()
          .meta(
            desc(
              "PEM certificates that sign the pod's serving certificate. Empty: the certificate is not verified, as kubelet does.",
            ),
          ),
      })
      .optional()
      .meta(desc("TLS settings; only with scheme HTTPS (type HTTP or GRPC).")),
    signature: z
      .strictObject({ secretRef: secretKeySelector })
      .optional()
      .meta(
        desc(
          'Signs every probe so the app can tell real probes from anyone else: header X-Healthprobe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(key, "<t>.<METHOD>.<path>")>, with the key from the Secret.',
        ),
      ),
  })
  .meta({
    ...desc("The probe sent to each selected pod, on a new connection each time, and what counts as success."),
    ...cel("timeoutWithinPeriod", "noBodyWithHead", "tlsOnlyWithHttps", ...PROBE_TYPE_RULE_NAMES),
  })
  .superRefine((p, ctx) => {
    if (p.timeoutSeconds > p.periodSeconds) fail(ctx, ["timeoutSeconds"], p.timeoutSeconds, "timeoutWithinPeriod", p);
    if (p.method === "HEAD" && (p.match.bodyContains ?? "") !== "")
      fail(ctx, ["match", "bodyContains"], p.match.bodyContains, "noBodyWithHead");
    if (p.tls !== undefined && p.scheme !== "HTTPS") fail(ctx, ["tls"], p.tls, "tlsOnlyWithHttps");
    checkProbeType(p, ctx);
  })
  // The HTTP defaults, applied here rather than in the CRD: a CRD default would set method
  // and statusCodes on TCP and GRPC probes too, where the rules above refuse them.
  .transform((p) => ({
    ...p,
    method: p.method ?? "GET",
    match: { ...p.match, statusCodes: p.match.statusCodes ?? ["200-299"] },
  }));
