// The Events the recorder (event-recorder.ts) writes, and where they go: events.k8s.io/v1 on the
// API server in production, a recording double in unit tests.
import type { KubeClient } from "./kube-client.js";

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
}

export interface EventInput {
  regarding: ObjectRef;
  related?: ObjectRef;
  type: "Normal" | "Warning";
  /** CamelCase reason, e.g. "Drained". */
  reason: string;
  /** What was done, e.g. "Drain" or "Replace". */
  action: string;
  note: string;
}

/** An events.k8s.io/v1 Event as the recorder writes it (times in RFC 3339 with microseconds). */
export interface EventsV1Event {
  apiVersion: "events.k8s.io/v1";
  kind: "Event";
  metadata: { name: string; namespace: string };
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  type: string;
  note: string;
  regarding: ObjectRef;
  related?: ObjectRef;
  series?: { count: number; lastObservedTime: string };
}

/** Where Events go: the API server in production, a recording double in unit tests. */
export interface EventSink {
  create(namespace: string, event: EventsV1Event): Promise<void>;
  /** Sets series on an existing Event; throws a 404-shaped error when it is gone. */
  patchSeries(namespace: string, name: string, series: { count: number; lastObservedTime: string }): Promise<void>;
}

export function kubeEventSink(client: KubeClient): EventSink {
  const events = (namespace: string) => `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`;
  return {
    async create(namespace, body) {
      try {
        await client.post(events(namespace), body);
      } catch (err) {
        throw new Error(`creating Event ${namespace}/${body.metadata?.name}`, { cause: err });
      }
    },
    async patchSeries(namespace, name, series) {
      try {
        // JSON patch "add" on a member replaces it when present: no content-type negotiation needed.
        await client.patch(
          `${events(namespace)}/${encodeURIComponent(name)}`,
          [{ op: "add", path: "/series", value: series }],
          "application/json-patch+json",
        );
      } catch (err) {
        throw new Error(`patching Event ${namespace}/${name}`, { cause: err });
      }
    },
  };
}
