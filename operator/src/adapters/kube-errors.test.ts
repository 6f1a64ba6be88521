import { describe, it, expect } from "@jest/globals";
import { ApiException } from "@kubernetes/client-node";
import {
  isAlreadyExists,
  isConflict,
  isGone,
  isNotFound,
  isRetryable,
  isTooManyRequests,
  reasonOf,
  retryAfterSecondsOf,
  statusCodeOf,
} from "./kube-errors.js";

function anApiException(
  code: number,
  reason: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const body = JSON.stringify({
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    reason,
    code,
    message: `${reason} message`,
    ...extra,
  });
  return new ApiException<string>(code, "Unknown API Status Code!", body, headers);
}

describe("kube errors", () => {
  it.each<[string, unknown, number | undefined]>([
    ["an ApiException", anApiException(404, "NotFound"), 404],
    ["a watch failure", Object.assign(new Error("Gone"), { statusCode: 410 }), 410],
    [
      "an error wrapping an ApiException",
      new Error("patching EndpointSlice shop/web-1", { cause: anApiException(409, "Conflict") }),
      409,
    ],
    ["a transport error", Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), undefined],
    ["a non-error", "boom", undefined],
  ])("reads the status code of %s", (_name, err, code) => {
    expect(statusCodeOf(err)).toBe(code);
  });

  it.each<[string, unknown, Record<string, boolean>]>([
    ["404 NotFound", anApiException(404, "NotFound"), { isNotFound: true }],
    ["409 Conflict", anApiException(409, "Conflict"), { isConflict: true }],
    ["409 AlreadyExists", anApiException(409, "AlreadyExists"), { isAlreadyExists: true }],
    ["410 Expired", anApiException(410, "Expired"), { isGone: true }],
    ["429 TooManyRequests", anApiException(429, "TooManyRequests"), { isTooManyRequests: true }],
  ])("classifies %s", (_name, err, expected) => {
    const actual = {
      isNotFound: isNotFound(err),
      isConflict: isConflict(err),
      isAlreadyExists: isAlreadyExists(err),
      isGone: isGone(err),
      isTooManyRequests: isTooManyRequests(err),
    };
    expect(actual).toEqual({
      isNotFound: false,
      isConflict: false,
      isAlreadyExists: false,
      isGone: false,
      isTooManyRequests: false,
      ...expected,
    });
  });

  it("reads the reason and the server's retry hint", () => {
    const err = anApiException(429, "TooManyRequests", { details: { retryAfterSeconds: 7 } });
    expect(reasonOf(err)).toBe("TooManyRequests");
    expect(retryAfterSecondsOf(err)).toBe(7);
    expect(retryAfterSecondsOf(anApiException(429, "TooManyRequests", {}, { "retry-after": "3" }))).toBe(3);
    expect(retryAfterSecondsOf(anApiException(404, "NotFound"))).toBeUndefined();
  });

  it.each<[string, unknown, boolean]>([
    ["a server error", anApiException(503, "ServiceUnavailable"), true],
    ["throttling", anApiException(429, "TooManyRequests"), true],
    ["a transport error", new Error("socket hang up"), true],
    ["an invalid object", anApiException(422, "Invalid"), false],
    ["a forbidden write", anApiException(403, "Forbidden"), false],
  ])("calls %s retryable or not", (_name, err, retryable) => {
    expect(isRetryable(err)).toBe(retryable);
  });
});
