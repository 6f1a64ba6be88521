export interface ContainerPorts {
  ports?: Array<{ name?: string; containerPort: number; protocol?: string }>;
}

/**
 * Resolves spec.probe.port against a pod: a number is used as is, a name is looked up among
 * the TCP ports of the pod's containers (the first match wins, as kubelet does for probes).
 */
export function resolveProbePort(
  port: number | string,
  containers: ContainerPorts[],
): { port: number } | { error: string } {
  if (typeof port === "number" || /^[0-9]+$/.test(port)) {
    const n = typeof port === "number" ? port : Number(port);
    if (!Number.isInteger(n) || n < 1 || n > 65535) return { error: `port ${port} is outside 1-65535` };
    return { port: n };
  }
  for (const c of containers) {
    for (const p of c.ports ?? []) {
      if (p.name === port && (p.protocol ?? "TCP") === "TCP") return { port: p.containerPort };
    }
  }
  return { error: `no TCP container port named "${port}" in the pod` };
}
