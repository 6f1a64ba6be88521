// Structured JSON logs (pino). Secret-bearing fields never reach the output.
import { randomBytes } from "node:crypto";
import { pino, type Logger, type DestinationStream } from "pino";
import type { LogLevel } from "./config.js";

export type { Logger } from "pino";

/** Paths pino replaces with "[REDACTED]": probe header values, HMAC keys, credentials. */
export const REDACT_PATHS = [
  "headers[*].value",
  "*.headers[*].value",
  "*.*.headers[*].value",
  "signatureKey",
  "*.signatureKey",
  "*.*.signatureKey",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "headers.Authorization",
  "*.headers.Authorization",
];

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go; stdout when unset (tests pass a collecting stream). */
  destination?: DestinationStream;
  name?: string;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino(
    {
      level: opts.level ?? "info",
      name: opts.name ?? "healthprobe-operator",
      redact: { paths: REDACT_PATHS, censor: "[REDACTED]" },
      serializers: { err: pino.stdSerializers.errWithCause },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination,
  );
}

/** Short random id that ties together the lines of one reconcile. */
export function newReconcileId(): string {
  return randomBytes(4).toString("hex");
}

export function reconcileLogger(base: Logger, policyKey: string): Logger {
  return base.child({ policy: policyKey, reconcileId: newReconcileId() });
}

/** The slice of a logger the runtime needs; a pino Logger satisfies it, and so does a test double. */
export interface LogSink {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
