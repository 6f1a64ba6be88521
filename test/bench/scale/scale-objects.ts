// The objects of the scale benchmark: per policy a selector-less Service `svc-<i>` and a policy
// selecting `app: svc-<i>`; pods spread round-robin over them, all probed on one port. With more
// than one namespace the policies (each with its Service and pods) go round-robin over
// `<namespace>-<k>`; names stay unique across namespaces, so a pod's name still says its Service.
import { Agent, type Dispatcher } from "undici";

export interface ScaleShape {
  namespace: string;
  pods: number;
  policies: number;
  periodSeconds: number;
  port: number;
  /** Default 1: everything in `namespace` itself. */
  namespaces?: number;
}

/** The namespaces the shape's objects live in. */
export function namespaceNames(shape: Pick<ScaleShape, "namespace" | "namespaces">): string[] {
  const n = shape.namespaces ?? 1;
  return n === 1 ? [shape.namespace] : Array.from({ length: n }, (_, k) => `${shape.namespace}-${k}`);
}

/** The namespace of policy (and Service) i. */
export function namespaceOfPolicy(shape: ScaleShape, i: number): string {
  const n = shape.namespaces ?? 1;
  return n === 1 ? shape.namespace : `${shape.namespace}-${i % n}`;
}

/** Generous for loopback (on a busy shared machine 1 s fails healthy pods), within the period. */
export const probeTimeoutSeconds = (periodSeconds: number): number => Math.min(2, periodSeconds);
export const FAILURE_THRESHOLD = 2;

export const serviceName = (i: number): string => `svc-${i}`;
export const podName = (i: number): string => `pod-${i}`;
/** The Service (and policy) a pod belongs to. */
export const serviceOfPod = (shape: ScaleShape, i: number): string => serviceName(i % shape.policies);

export function service(shape: ScaleShape, i: number): object {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: serviceName(i), namespace: namespaceOfPolicy(shape, i) },
    spec: { ports: [{ name: "http", port: 80, targetPort: shape.port, protocol: "TCP" }] },
  };
}

export function pod(shape: ScaleShape, i: number): object {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: podName(i),
      namespace: namespaceOfPolicy(shape, i % shape.policies),
      labels: { app: serviceOfPod(shape, i) },
    },
    spec: {
      containers: [
        {
          name: "app",
          image: "registry.example/web:1",
          ports: [{ name: "http", containerPort: shape.port, protocol: "TCP" }],
        },
      ],
    },
  };
}

export function policy(shape: ScaleShape, i: number): object {
  return {
    apiVersion: "healthprobe.io/v1alpha1",
    kind: "HealthProbePolicy",
    metadata: { name: serviceName(i), namespace: namespaceOfPolicy(shape, i) },
    spec: {
      serviceName: serviceName(i),
      selector: { matchLabels: { app: serviceName(i) } },
      probe: {
        port: shape.port,
        path: "/healthz",
        periodSeconds: shape.periodSeconds,
        timeoutSeconds: probeTimeoutSeconds(shape.periodSeconds),
      },
      evaluation: { failureThreshold: FAILURE_THRESHOLD, successThreshold: 1 },
      drain: { enabled: true, maxUnhealthyPercent: 50 },
      replacement: { enabled: false },
    },
  };
}

/**
 * Creates objects over plain HTTP (JSON in, status checked), a few requests at a time on one
 * keep-alive pool. undici's request API, not fetch: the creating client shares the process with
 * the server, and fetch's per-request cost would count as the server's. `tls`: e.g. to trust a
 * server's own serving certificate.
 */
export async function createAll(
  serverUrl: string,
  token: string,
  objects: Array<{ path: string; body: object }>,
  concurrency = 16,
  tls?: { rejectUnauthorized: boolean },
): Promise<void> {
  const agent = new Agent({ connections: concurrency, keepAliveTimeout: 10_000, ...(tls ? { connect: tls } : {}) });
  let next = 0;
  const worker = async () => {
    while (next < objects.length) {
      const { path, body } = objects[next++]!;
      await postWithRetry(agent, serverUrl, path, token, body);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await agent.close();
  }
}

/** A reset connection is retried (a keep-alive socket the server closed); a 409 on a retry means the first try got through. */
async function postWithRetry(agent: Agent, origin: string, path: string, token: string, body: object): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let res: Dispatcher.ResponseData;
    try {
      res = await agent.request({
        origin,
        path,
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
      });
    } catch (err) {
      if (attempt >= 5) throw new Error(`POST ${origin}${path}: ${(err as Error).message}`, { cause: err });
      continue;
    }
    const text = await res.body.text();
    if (res.statusCode === 201 || res.statusCode === 200 || (res.statusCode === 409 && attempt > 1)) return;
    throw new Error(`POST ${origin}${path}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
  }
}
