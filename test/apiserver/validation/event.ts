// Event, core/v1 and events.k8s.io/v1. From kubernetes/kubernetes pkg/apis/core/validation/events.go.
// Both versions are validated as the internal core Event, so field paths use the core names
// (involvedObject, message) even for events.k8s.io/v1 (regarding, note). Requests through
// core/v1 get only the legacy checks; events.k8s.io/v1 adds the strict ones.
import { invalid, required } from "./field-errors.js";
import { byteLength, isDNS1123Subdomain, isQualifiedName, nameIsDNSSubdomain } from "./names.js";
import {
  asObj,
  asStr,
  sameTime,
  semanticEqual,
  validateObjectMeta,
  validateObjectMetaUpdate,
  type Obj,
} from "./object-meta.js";
import type { FieldCause } from "./index.js";

export const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
export const ACTION_LENGTH_LIMIT = 128;
export const REASON_LENGTH_LIMIT = 128;
export const NOTE_LENGTH_LIMIT = 1024;

interface InternalEvent {
  namespace: string;
  involvedObject: Obj;
  reason: string;
  message: string;
  source: Obj;
  firstTimestamp: unknown;
  lastTimestamp: unknown;
  count: number;
  type: string;
  eventTime: unknown;
  series: Obj | undefined;
  action: string;
  related: unknown;
  reportingController: string;
  reportingInstance: string;
}

/** Converts either served version to the internal shape the real validation sees. */
function toInternal(obj: Obj, eventsGroup: boolean): InternalEvent {
  const meta = asObj(obj.metadata);
  const series = obj.series === undefined || obj.series === null ? undefined : asObj(obj.series);
  return {
    namespace: asStr(meta.namespace),
    involvedObject: asObj(eventsGroup ? obj.regarding : obj.involvedObject),
    reason: asStr(obj.reason),
    message: asStr(eventsGroup ? obj.note : obj.message),
    source: asObj(eventsGroup ? obj.deprecatedSource : obj.source),
    firstTimestamp: eventsGroup ? obj.deprecatedFirstTimestamp : obj.firstTimestamp,
    lastTimestamp: eventsGroup ? obj.deprecatedLastTimestamp : obj.lastTimestamp,
    count: Number((eventsGroup ? obj.deprecatedCount : obj.count) ?? 0),
    type: asStr(obj.type),
    eventTime: obj.eventTime,
    series,
    action: asStr(obj.action),
    related: obj.related,
    reportingController: asStr(eventsGroup ? obj.reportingController : obj.reportingComponent),
    reportingInstance: asStr(obj.reportingInstance),
  };
}

const isSet = (t: unknown): boolean => t !== undefined && t !== null && t !== "";

function legacyValidateEvent(e: InternalEvent): FieldCause[] {
  const errs: FieldCause[] = [];
  const involvedNs = asStr(e.involvedObject.namespace);
  const nsPath = "involvedObject.namespace";
  if (!isSet(e.eventTime)) {
    if (involvedNs === "") {
      if (e.namespace !== "" && e.namespace !== "default")
        errs.push(invalid(nsPath, involvedNs, "does not match event.namespace"));
    } else if (e.namespace !== involvedNs) {
      errs.push(invalid(nsPath, involvedNs, "does not match event.namespace"));
    }
  } else {
    if (involvedNs === "" && e.namespace !== "default" && e.namespace !== "kube-system") {
      errs.push(invalid(nsPath, involvedNs, "does not match event.namespace"));
    }
    if (e.reportingController === "") errs.push(required("reportingController"));
    errs.push(
      ...isQualifiedName(e.reportingController).map((m) => invalid("reportingController", e.reportingController, m)),
    );
    if (e.reportingInstance === "") errs.push(required("reportingInstance"));
    if (byteLength(e.reportingInstance) > REPORTING_INSTANCE_LENGTH_LIMIT) {
      errs.push(invalid("reportingInstance", "", `can have at most ${REPORTING_INSTANCE_LENGTH_LIMIT} characters`));
    }
    if (e.action === "") errs.push(required("action"));
    if (byteLength(e.action) > ACTION_LENGTH_LIMIT)
      errs.push(invalid("action", "", `can have at most ${ACTION_LENGTH_LIMIT} characters`));
    if (e.reason === "") errs.push(required("reason"));
    if (byteLength(e.reason) > REASON_LENGTH_LIMIT)
      errs.push(invalid("reason", "", `can have at most ${REASON_LENGTH_LIMIT} characters`));
    if (byteLength(e.message) > NOTE_LENGTH_LIMIT)
      errs.push(invalid("message", "", `can have at most ${NOTE_LENGTH_LIMIT} characters`));
  }
  errs.push(...isDNS1123Subdomain(e.namespace).map((m) => invalid("namespace", e.namespace, m)));
  return errs;
}

function validateSeries(e: InternalEvent): FieldCause[] {
  if (!e.series) return [];
  const errs: FieldCause[] = [];
  if (Number(e.series.count ?? 0) < 2) errs.push(invalid("series.count", "", "should be at least 2"));
  if (!isSet(e.series.lastObservedTime)) errs.push(required("series.lastObservedTime"));
  return errs;
}

const same = semanticEqual;

export function validateEvent(obj: Obj, old: Obj | undefined, eventsGroup: boolean): FieldCause[] {
  const e = toInternal(obj, eventsGroup);
  const errs = legacyValidateEvent(e);
  if (!eventsGroup) return errs;
  const meta = asObj(obj.metadata);
  if (!old) {
    errs.push(...validateObjectMeta(meta, { namespaced: true, nameFn: nameIsDNSSubdomain, kubeFinalizers: true }));
    errs.push(...validateSeries(e));
    if (!isSet(e.eventTime)) errs.push(required("eventTime"));
    if (e.type !== "Normal" && e.type !== "Warning") errs.push(invalid("type", "", `has invalid value: ${e.type}`));
    if (isSet(e.firstTimestamp)) errs.push(invalid("firstTimestamp", "", "needs to be unset"));
    if (isSet(e.lastTimestamp)) errs.push(invalid("lastTimestamp", "", "needs to be unset"));
    if (e.count !== 0) errs.push(invalid("count", "", "needs to be unset"));
    if (asStr(e.source.component) !== "" || asStr(e.source.host) !== "")
      errs.push(invalid("source", "", "needs to be unset"));
    return errs;
  }
  const o = toInternal(old, eventsGroup);
  errs.push(...validateObjectMetaUpdate(meta, asObj(old.metadata), { kubeFinalizers: true }));
  if (!same(e.series, o.series)) errs.push(...validateSeries(e));
  const immutable: Array<[string, unknown, unknown]> = [
    ["involvedObject", e.involvedObject, o.involvedObject],
    ["reason", e.reason, o.reason],
    ["message", e.message, o.message],
    ["source", e.source, o.source],
    ["firstTimestamp", e.firstTimestamp, o.firstTimestamp],
    ["lastTimestamp", e.lastTimestamp, o.lastTimestamp],
    ["count", e.count, o.count],
    ["type", e.type, o.type],
    ["eventTime", e.eventTime, o.eventTime],
    ["action", e.action, o.action],
    ["related", e.related, o.related],
    ["reportingController", e.reportingController, o.reportingController],
    ["reportingInstance", e.reportingInstance, o.reportingInstance],
  ];
  const times = new Set(["firstTimestamp", "lastTimestamp", "eventTime"]);
  for (const [f, nv, ov] of immutable) {
    const unchanged = times.has(f) ? sameTime(nv, ov, f === "eventTime" ? 1 : 1000) : same(nv, ov);
    if (!unchanged) errs.push(invalid(f, nv, "field is immutable"));
  }
  return errs;
}
