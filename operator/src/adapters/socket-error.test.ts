import { describe, expect, it } from "@jest/globals";
import type { ProbeErrorKind } from "../domain/probe-request.js";
import { classifySocketError } from "./socket-error.js";

type Phase = { tls: boolean; requestSent: boolean; tcpConnecting: boolean };
const connecting: Phase = { tls: false, requestSent: false, tcpConnecting: true };
const handshaking: Phase = { tls: true, requestSent: false, tcpConnecting: false };
const reading: Phase = { tls: false, requestSent: true, tcpConnecting: false };

const anError = (code: string | undefined, message = "boom", reason?: string) =>
  Object.assign(new Error(message), { code, reason });

describe("classifySocketError", () => {
  const cases: Array<{
    name: string;
    code?: string;
    message?: string;
    reason?: string;
    phase: Phase;
    kind: ProbeErrorKind;
    text: string;
  }> = [
    {
      name: "a refused connection is a connect failure",
      code: "ECONNREFUSED",
      phase: connecting,
      kind: "connect",
      text: "connect ECONNREFUSED",
    },
    {
      name: "an unreachable host is a connect failure",
      code: "EHOSTUNREACH",
      phase: connecting,
      kind: "connect",
      text: "connect EHOSTUNREACH",
    },
    {
      name: "an error without a code while connecting keeps its message",
      message: "socket hang up",
      phase: connecting,
      kind: "connect",
      text: "connect socket hang up",
    },
    {
      name: "a certificate from another CA is a TLS failure",
      code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      phase: handshaking,
      kind: "tls",
      text: "TLS: certificate signed by unknown authority",
    },
    {
      name: "a self-signed certificate is a TLS failure",
      code: "DEPTH_ZERO_SELF_SIGNED_CERT",
      phase: handshaking,
      kind: "tls",
      text: "TLS: certificate signed by unknown authority",
    },
    {
      name: "a certificate for another name is a TLS failure naming the expected one",
      code: "ERR_TLS_CERT_ALTNAME_INVALID",
      phase: handshaking,
      kind: "tls",
      text: "TLS: certificate is not valid for probe.test",
    },
    {
      name: "an expired certificate is a TLS failure",
      code: "CERT_HAS_EXPIRED",
      phase: handshaking,
      kind: "tls",
      text: "TLS: certificate has expired",
    },
    {
      name: "a certificate not yet valid is a TLS failure",
      code: "CERT_NOT_YET_VALID",
      phase: handshaking,
      kind: "tls",
      text: "TLS: certificate is not yet valid",
    },
    {
      name: "an OpenSSL error is a TLS failure with its reason",
      code: "ERR_SSL_WRONG_VERSION_NUMBER",
      reason: "wrong version number",
      phase: handshaking,
      kind: "tls",
      text: "TLS: wrong version number",
    },
    {
      name: "a reset during the handshake is a TLS failure",
      code: "ECONNRESET",
      phase: handshaking,
      kind: "tls",
      text: "TLS: handshake failed (ECONNRESET)",
    },
    {
      name: "a reset after the request is a broken connection",
      code: "ECONNRESET",
      phase: reading,
      kind: "connect",
      text: "connection reset by peer",
    },
    { name: "any other read error is other", code: "EPIPE", phase: reading, kind: "other", text: "read EPIPE" },
  ];

  it.each(cases)("$name", ({ code, message, reason, phase, kind, text }) => {
    const failure = classifySocketError(
      anError(code, message, reason),
      phase.tls,
      phase.requestSent,
      phase.tcpConnecting,
      "probe.test",
    );
    expect(failure).toEqual({ kind, message: text });
  });
});
