// Who may use what through a policy. Writing a policy in a namespace must give no more than the
// built-in edit role gives there, and less for Secrets: the operator reads a Secret under its own
// ClusterRole and sends the value to pods the policy's author chooses, so a Secret's owner opts
// in by name. A hostNetwork pod answers on its node's address, so probing it would reach
// node-local services: its owner opts in too.

/** On a Secret: the policies (comma-separated names, or "*") that may send its data in probes. */
export const ALLOWED_POLICIES_ANNOTATION = "healthprobe.io/allowed-policies";
/** On a pod: "true" lets policies probe it although it uses the host's network. */
export const PROBE_HOST_NETWORK_ANNOTATION = "healthprobe.io/probe-host-network";

/** Whether a Secret whose allowed-policies annotation is this value (undefined: not set) may be used by the named policy. */
export function secretPermits(allowedPolicies: string | undefined, policyName: string): boolean {
  return namesOf(allowedPolicies).some((name) => name === "*" || name === policyName);
}

/** Whether the annotation value permits any policy at all (only then is the Secret's data kept). */
export function secretPermitsAny(allowedPolicies: string | undefined): boolean {
  return namesOf(allowedPolicies).length > 0;
}

function namesOf(allowedPolicies: string | undefined): string[] {
  return (allowedPolicies ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** The condition message for a Secret the policy may not use, naming the field and the fix. */
export function secretNotPermittedMessage(secretName: string, policyName: string): string {
  return (
    `Secret ${JSON.stringify(secretName)} does not allow policy ${JSON.stringify(policyName)} to use it; ` +
    `its owner can allow it: kubectl annotate secret ${secretName} ${ALLOWED_POLICIES_ANNOTATION}=${policyName}`
  );
}

/**
 * The condition message for a Secret the API server refuses the operator (403): the operator's
 * RBAC lacks get on secrets there (the chart's rbac.secrets=false). The server's own words say
 * which user and namespace.
 */
export function secretForbiddenMessage(secretName: string, serverMessage: string): string {
  return (
    `the API server refuses the operator Secret ${JSON.stringify(secretName)} (403 Forbidden: ${serverMessage}); ` +
    `the operator needs get on secrets in this namespace (the chart's rbac.secrets=true), or the probe must not use a Secret`
  );
}

export interface PodNetworkView {
  hostNetwork?: boolean | undefined;
  annotations?: Readonly<Record<string, string>> | undefined;
}

/** Why the pod is not probed (it uses the host's network and has not opted in), or undefined when it may be. */
export function hostNetworkRefusal(pod: PodNetworkView): string | undefined {
  if (pod.hostNetwork !== true) return undefined;
  if (pod.annotations?.[PROBE_HOST_NETWORK_ANNOTATION] === "true") return undefined;
  return `hostNetwork pod (add annotation ${PROBE_HOST_NETWORK_ANNOTATION}=true to probe it)`;
}
