// AdmissionReview admission.k8s.io/v1, as kube-apiserver sends it to a mutating webhook and as it
// accepts the answer (k8s.io/apiserver .../webhook/request/admissionreview.go,
// VerifyAdmissionResponse): apiVersion admission.k8s.io/v1 and kind AdmissionReview, response.uid
// equal to request.uid, and patch and patchType together or not at all, patchType "JSONPatch"
// and patch the base64 of a JSON patch (the field is []byte in Go).
import { z } from "zod";

export const ADMISSION_API_VERSION = "admission.k8s.io/v1";
export const ADMISSION_KIND = "AdmissionReview";

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  operation: string;
  /** The request's namespace (a pod's own metadata.namespace may be empty on create). */
  namespace: string;
  /** The object being admitted, as submitted (after earlier mutating webhooks). */
  object: unknown;
  dryRun: boolean;
}

export type ParsedReview = { ok: true; request: AdmissionRequest } | { ok: false; uid?: string; message: string };

const requestSchema = z.object({
  uid: z.string().min(1, "must not be empty"),
  kind: z.object({ group: z.string().default(""), version: z.string(), kind: z.string() }),
  operation: z.string(),
  namespace: z.string().default(""),
  object: z.unknown().optional(),
  dryRun: z.boolean().default(false),
});

/** Reads a review request; a bad one names the field, and carries the uid when there was one to echo. */
export function parseAdmissionReview(body: unknown): ParsedReview {
  if (typeof body !== "object" || body === null) return { ok: false, message: "body: must be a JSON object" };
  const review = body as { apiVersion?: unknown; kind?: unknown; request?: unknown };
  const rawUid = (review.request as { uid?: unknown } | undefined)?.uid;
  const uid = typeof rawUid === "string" && rawUid !== "" ? rawUid : undefined;
  const fail = (message: string): ParsedReview => ({ ok: false, message, ...(uid ? { uid } : {}) });
  if (review.apiVersion !== ADMISSION_API_VERSION || review.kind !== ADMISSION_KIND) {
    return fail(
      `apiVersion/kind: must be ${ADMISSION_API_VERSION} ${ADMISSION_KIND}, got ${JSON.stringify(review.apiVersion)} ${JSON.stringify(review.kind)}`,
    );
  }
  if (review.request === undefined) return fail("request: required");
  const parsed = requestSchema.safeParse(review.request);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return fail(`request.${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"}`);
  }
  return { ok: true, request: { ...parsed.data, object: parsed.data.object ?? null } };
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: typeof ADMISSION_KIND;
  response: { uid: string; allowed: true; patchType?: "JSONPatch"; patch?: string; warnings?: string[] };
}

/** Always allowed: the webhook never refuses a pod. A patch is sent only when it has operations. */
export function admissionResponse(
  uid: string,
  patch?: readonly unknown[],
  warnings?: readonly string[],
): AdmissionReviewResponse {
  const response: AdmissionReviewResponse["response"] = { uid, allowed: true };
  if (patch && patch.length > 0) {
    response.patchType = "JSONPatch";
    response.patch = Buffer.from(JSON.stringify(patch), "utf8").toString("base64");
  }
  if (warnings && warnings.length > 0) response.warnings = [...warnings];
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response };
}
