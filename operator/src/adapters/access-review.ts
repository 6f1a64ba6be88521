// The API calls behind the locked endpoints: TokenReview (who is this bearer token?) and
// SubjectAccessReview (may that user `get` this non-resource path?), as kube-apiserver's
// delegated authentication and authorisation make them. Errors are thrown, never read as a
// denial or an approval: the guard answers 500 for them.
import type { AccessReviewer, AccessReviewResult, ReviewedUser, TokenReviewResult } from "../domain/endpoint-access.js";
import type { KubeClient } from "./kube-client.js";

interface TokenReviewJson {
  status?: {
    authenticated?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    error?: string;
  };
}

interface SubjectAccessReviewJson {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

export class KubeAccessReviewer implements AccessReviewer {
  constructor(private readonly client: Pick<KubeClient, "request">) {}

  async reviewToken(token: string, signal?: AbortSignal): Promise<TokenReviewResult> {
    const body = { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } };
    const out = await this.client.request<TokenReviewJson>("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
      body,
      ...(signal ? { signal } : {}),
    });
    const status = out?.status;
    const username = status?.user?.username;
    if (status?.authenticated !== true || !username)
      return status?.error ? { authenticated: false, error: status.error } : { authenticated: false };
    const user: ReviewedUser = { username };
    if (status.user?.uid) user.uid = status.user.uid;
    if (status.user?.groups) user.groups = [...status.user.groups];
    if (status.user?.extra) user.extra = status.user.extra;
    return { authenticated: true, user };
  }

  async reviewAccess(
    user: ReviewedUser,
    nonResource: { path: string; verb: string },
    signal?: AbortSignal,
  ): Promise<AccessReviewResult> {
    const spec = {
      user: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      groups: user.groups ?? [],
      ...(user.extra ? { extra: user.extra } : {}),
      nonResourceAttributes: nonResource,
    };
    const body = { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec };
    const out = await this.client.request<SubjectAccessReviewJson>(
      "POST",
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      { body, ...(signal ? { signal } : {}) },
    );
    const status = out?.status;
    const reason = status?.reason || status?.evaluationError;
    return { allowed: status?.allowed === true && status?.denied !== true, ...(reason ? { reason } : {}) };
  }
}
