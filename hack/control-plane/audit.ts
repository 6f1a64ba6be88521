// kube-apiserver's audit log, shared by the control plane and the real node's cluster.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";

/** The audit log's file name in the run's directory. */
export const AUDIT_LOG = "audit.log";

/** kube-apiserver's flags for an audit log in the run's directory, one JSON event a line, written as each request completes. */
export function auditFlags(dir: string, policy: object | undefined): string[] {
  if (!policy) return [];
  writeFileSync(join(dir, "audit-policy.yaml"), stringify(policy));
  return [
    `--audit-policy-file=${join(dir, "audit-policy.yaml")}`,
    `--audit-log-path=${join(dir, AUDIT_LOG)}`,
    "--audit-log-format=json",
    "--audit-log-mode=blocking",
    "--audit-log-maxsize=1000",
  ];
}

/** One line of the audit log (audit.k8s.io/v1 Event): the fields the tests and benchmarks read. */
export interface AuditEvent {
  /** One request's id: a long-running request (a watch) has an event at ResponseStarted and at ResponseComplete. */
  auditID?: string;
  stage?: string;
  verb?: string;
  requestURI?: string;
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
  user?: { username?: string };
  userAgent?: string;
  objectRef?: {
    resource?: string;
    subresource?: string;
    namespace?: string;
    name?: string;
    /** Absent for the core group. */
    apiGroup?: string;
    apiVersion?: string;
  };
  responseStatus?: { code?: number };
  annotations?: Record<string, string>;
  /** Only at level Request or above. */
  requestObject?: { metadata?: { annotations?: Record<string, string> }; spec?: { holderIdentity?: string } };
}

/** The events of an audit log's JSON lines; a last line still being written is left out. */
export function auditEventsIn(text: string): AuditEvent[] {
  const lines = text.split("\n").filter((l) => l.startsWith("{"));
  return lines.flatMap((line, i) => {
    try {
      return [JSON.parse(line) as AuditEvent];
    } catch (err) {
      if (i === lines.length - 1) return [];
      throw err;
    }
  });
}

/** The events of the audit log at `path`, none while it does not exist yet. */
export function readAuditLog(path: string): AuditEvent[] {
  return existsSync(path) ? auditEventsIn(readFileSync(path, "utf8")) : [];
}
