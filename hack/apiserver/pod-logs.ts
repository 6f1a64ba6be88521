// GET pods/{name}/log: what kube-apiserver answers for a pod's container log, with the lines
// coming from a buffer per pod container that tests (or the pod servers) write, instead of a
// kubelet's container runtime. The real server validates the options and the container and then
// proxies to the kubelet of the pod's node; the kubelet answers with the tail of the log.
import type { Cluster } from "./cluster.js";
import { ApiError, badRequest, fieldErrors, invalid, notFound } from "./errors.js";
import type { KubeObject } from "./store.js";

interface LogBuffer {
  current: string[];
  previous?: string[];
}

/** Log lines per pod (by uid) and container; the previous container's after a restart. */
export class PodLogs {
  private readonly buffers = new Map<string, LogBuffer>();

  constructor(private readonly cluster: Pick<Cluster, "get" | "registry">) {}

  /** Appends lines to a running pod's container log (the pod must exist: its uid keys the log). */
  append(namespace: string, pod: string, container: string, lines: readonly string[]): void {
    const b = this.buffer(namespace, pod, container);
    b.current.push(...lines.map((l) => l.replace(/\n$/, "")));
  }

  /** A container restart: the current log becomes the previous one and a new one starts empty. */
  restart(namespace: string, pod: string, container: string): void {
    const b = this.buffer(namespace, pod, container);
    b.previous = b.current;
    b.current = [];
  }

  /** The body of GET .../pods/{name}/log?container=&tailLines=&previous=&limitBytes=, or the error the real server gives. */
  read(namespace: string, name: string, query: URLSearchParams): string {
    const pod = this.pod(namespace, name);
    const container = containerOf(pod, query.get("container") ?? "");
    const tailLines = intParam(query, "tailLines", 0, name);
    const limitBytes = intParam(query, "limitBytes", 1, name);
    const previous = query.get("previous") === "true";
    const status = pod.status as { phase?: string; podIP?: string } | undefined;
    if (!status?.podIP && status?.phase !== "Running") {
      throw badRequest(`container "${container}" in pod "${name}" is waiting to start: ContainerCreating`);
    }
    const b = this.buffers.get(keyOf(pod, container));
    const lines = previous ? b?.previous : (b?.current ?? []);
    if (lines === undefined)
      throw badRequest(`previous terminated container "${container}" in pod "${name}" not found`);
    const tail = tailLines === undefined ? lines : lines.slice(Math.max(0, lines.length - tailLines));
    const text = tail.map((l) => `${l}\n`).join("");
    if (limitBytes === undefined) return text;
    return Buffer.from(text).subarray(0, limitBytes).toString();
  }

  private buffer(namespace: string, name: string, container: string): LogBuffer {
    const key = keyOf(this.pod(namespace, name), container);
    let b = this.buffers.get(key);
    if (!b) this.buffers.set(key, (b = { current: [] }));
    return b;
  }

  private pod(namespace: string, name: string): KubeObject {
    const t = this.cluster.registry.find("", "v1", "pods")!;
    try {
      return this.cluster.get(t, namespace, name);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) throw notFound("", "pods", name);
      throw err;
    }
  }
}

function keyOf(pod: KubeObject, container: string): string {
  return `${pod.metadata.namespace}/${pod.metadata.uid}/${container}`;
}

/** As the real LogLocation: the only container by default, else the name must be given and valid. */
function containerOf(pod: KubeObject, container: string): string {
  const names = ((pod.spec as { containers?: Array<{ name: string }> } | undefined)?.containers ?? []).map(
    (c) => c.name,
  );
  if (container === "") {
    if (names.length === 1) return names[0]!;
    if (names.length === 0) throw badRequest(`a container name must be specified for pod ${pod.metadata.name}`);
    throw badRequest(
      `a container name must be specified for pod ${pod.metadata.name}, choose one of: [${names.join(" ")}]`,
    );
  }
  if (!names.includes(container)) throw badRequest(`container ${container} is not valid for pod ${pod.metadata.name}`);
  return container;
}

function intParam(query: URLSearchParams, key: string, min: number, name: string): number | undefined {
  const raw = query.get(key);
  if (raw === null) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(raw)}: invalid syntax`);
  if (n < min)
    throw invalid("", "PodLogOptions", name, [
      fieldErrors.invalid(key, n, min === 0 ? "must be greater than or equal to 0" : "must be greater than 0"),
    ]);
  return n;
}
