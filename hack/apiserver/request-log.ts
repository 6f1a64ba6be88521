// The request log: every request with its actor, verb and outcome, so tests can count writes per actor.
export interface RequestLogEntry {
  time: string;
  /** From `Authorization: Bearer <token>`: the token is the user name. */
  user: string;
  verb: string;
  method: string;
  path: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  code: number;
  fieldManager?: string;
  userAgent?: string;
}

const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);

export function isWrite(entry: RequestLogEntry): boolean {
  return WRITE_VERBS.has(entry.verb);
}

/** Requests matching the filter: e.g. `requestsBy(log, { user: "operator", writes: true })`. */
export function requestsBy(
  log: RequestLogEntry[],
  filter: {
    user?: string;
    verb?: string;
    resource?: string;
    subresource?: string;
    writes?: boolean;
    succeeded?: boolean;
  },
): RequestLogEntry[] {
  return log.filter(
    (e) =>
      (filter.user === undefined || e.user === filter.user) &&
      (filter.verb === undefined || e.verb === filter.verb) &&
      (filter.resource === undefined || e.resource === filter.resource) &&
      (filter.subresource === undefined || e.subresource === filter.subresource) &&
      (!filter.writes || isWrite(e)) &&
      (filter.succeeded === undefined || e.code < 400 === filter.succeeded),
  );
}
