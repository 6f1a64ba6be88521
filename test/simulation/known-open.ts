// Invariants the operator on this branch is known to break, each with the defect behind it.
// The jest run of the simulation skips them so it stays green while the fixes are elsewhere;
// `npm run simulate` checks every invariant regardless. Empty this list as the fixes land.
export const KNOWN_OPEN: ReadonlyMap<string, string> = new Map([
  ["adoption-free", "Unknown pods are not admitted once one pod is Healthy: adopting a Service (a new policy, a restart) drains its serving pods"],
  ["drain-cap", "Unknown pods kept out of rotation are not counted under maxUnhealthyPercent"],
  ["never-dark", "fail-open is decided without kubelet readiness: a Healthy but kubelet-NotReady pod keeps the Unhealthy ones drained"],
  ["no-frozen-slices", "slices of a Service the policy no longer manages (serviceName changed, selector added, Service or policy deleted) are left as they were"],
  ["fresh-evidence", "right after a restart or a leader change, pods are evicted on restored state before any fresh probe"],
  ["no-eviction-in-fail-open", "replacement goes on while FailOpen=True"],
  ["replaceable-only", "mirror pods (owner kind Node) pass the controller check; two policies' reconciles evict the same pod concurrently"],
  ["policy-budgets", "a ledger charged by another policy's reconcile is overwritten with a stale copy (no 409), so charges are lost"],
]);
