// Core v1 Events and events.k8s.io/v1 Events are one resource served through two APIs: the real server
// keeps both in the core Event storage and converts on the way in and out (pkg/apis/events/v1/conversion.go).
// Here the stored form is the core v1 object; an events.k8s.io view is converted from it on read and back on write.
import type { KubeObject } from "./store.js";

export const CORE_EVENT_VERSION = "v1";
export const EVENTS_V1_VERSION = "events.k8s.io/v1";

/** [events.k8s.io/v1 name, core v1 name] of the fields the two versions name differently. */
const RENAMED: ReadonlyArray<readonly [string, string]> = [
  ["regarding", "involvedObject"],
  ["note", "message"],
  ["reportingController", "reportingComponent"],
  ["deprecatedSource", "source"],
  ["deprecatedFirstTimestamp", "firstTimestamp"],
  ["deprecatedLastTimestamp", "lastTimestamp"],
  ["deprecatedCount", "count"],
];

/** Fields with the same name and shape in both versions (series: count and lastObservedTime). */
const SHARED = ["eventTime", "series", "reportingInstance", "action", "reason", "related", "type"];

const isEventVersion = (apiVersion: unknown): boolean =>
  apiVersion === CORE_EVENT_VERSION || apiVersion === EVENTS_V1_VERSION;

/**
 * The Event at the other served version; anything else (other kinds, the same version) is returned as is.
 * Fields unknown to the source version are dropped, as decoding into the Go types drops them.
 */
export function convertEvent(obj: KubeObject, apiVersion: string): KubeObject {
  if (
    obj.kind !== "Event" ||
    obj.apiVersion === apiVersion ||
    !isEventVersion(obj.apiVersion) ||
    !isEventVersion(apiVersion)
  )
    return obj;
  const toCore = apiVersion === CORE_EVENT_VERSION;
  const out: KubeObject = { apiVersion, kind: "Event", metadata: obj.metadata };
  for (const [eventsName, coreName] of RENAMED) {
    const [from, to] = toCore ? [eventsName, coreName] : [coreName, eventsName];
    if (obj[from] !== undefined) out[to] = obj[from];
  }
  for (const f of SHARED) if (obj[f] !== undefined) out[f] = obj[f];
  return out;
}
