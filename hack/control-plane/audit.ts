// kube-apiserver's audit log, shared by the control plane and the real node's cluster.
import { writeFileSync } from "node:fs";
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
