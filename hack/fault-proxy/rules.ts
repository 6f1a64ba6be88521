// The fault proxy's vocabulary: which request a rule picks (verb, resource, path, user agent, a
// header, a seeded probability, a count) and what it does to it. The names follow the API test
// server's fault injector (failNext, failRate, addLatency, dropWatches, expireNextWatch) so a
// simulation can drive either.
import { Rng } from "../../test/simulation/prng.js";

export type Fault =
  /** Answer with this status (5xx, 429 with Retry-After, 409 for writes only) without asking upstream. */
  | { kind: "status"; code: number; reason?: string; retryAfterSeconds?: number }
  /** Wait this long before forwarding. */
  | { kind: "latency"; ms: number }
  /** A watch: forward this many events, then end the stream (the client sees it close). */
  | { kind: "drop-watch"; afterEvents?: number }
  /** A watch: forward this many events, then forward nothing more but keep the connection open. */
  | { kind: "stall-watch"; afterEvents?: number }
  /** A watch or list from a resourceVersion: 410 Expired (an ERROR event on a watch, as kube-apiserver does). */
  | { kind: "expire" }
  /** Destroy the client's socket: before forwarding, or after this many response body bytes. */
  | { kind: "reset"; afterBytes?: number }
  /** Send the headers and this many body bytes (default: half of Content-Length, or the first chunk's half), then destroy the socket. */
  | { kind: "truncate"; afterBytes?: number };

export interface RuleFilter {
  /** get, list, watch, create, update, patch, delete, deletecollection. */
  verb?: string;
  /** The resource's plural name, e.g. "pods", "leases". */
  resource?: string;
  /** A regular expression the request path (without query) must match. */
  path?: string;
  /** A substring of the User-Agent header. */
  userAgent?: string;
  /** A header that must have exactly this value. */
  header?: { name: string; value: string };
}

export interface FaultRule extends RuleFilter {
  fault: Fault;
  /** 0..1, drawn from the proxy's seeded generator; default 1. */
  probability?: number;
  /** How many requests it applies to, then it is gone; default unlimited. */
  count?: number;
  /** Applies until this many ms from when it was added; default forever. */
  durationMs?: number;
}

/** What the proxy knows of a request when it picks faults. */
export interface RequestInfo {
  method: string;
  path: string;
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  watch: boolean;
  resourceVersion: string;
  userAgent: string;
  headers: Record<string, string | string[] | undefined>;
}

const WRITES = new Set(["create", "update", "patch", "delete", "deletecollection"]);

export const isWriteVerb = (verb: string): boolean => WRITES.has(verb);

/** Reads verb and resource from a Kubernetes API path, as kube-apiserver's request info resolver does. */
export function requestInfo(method: string, url: string, headers: RequestInfo["headers"]): RequestInfo {
  const u = new URL(url, "http://proxy.invalid");
  const parts = u.pathname.split("/").filter(Boolean);
  let group = "";
  let version = "";
  let rest: string[] = [];
  if (parts[0] === "api" && parts.length >= 2) [version, rest] = [parts[1]!, parts.slice(2)];
  else if (parts[0] === "apis" && parts.length >= 3) [group, version, rest] = [parts[1]!, parts[2]!, parts.slice(3)];
  let namespace = "";
  if (rest[0] === "namespaces" && rest.length >= 3) [namespace, rest] = [rest[1]!, rest.slice(2)];
  const [resource = "", name = "", subresource = ""] = rest;
  const watch = u.searchParams.get("watch") === "true" || u.searchParams.get("watch") === "1";
  const verb = verbOf(method, Boolean(name), watch);
  const ua = headers["user-agent"];
  return {
    method,
    path: u.pathname,
    verb,
    group,
    version,
    resource,
    subresource,
    namespace,
    name,
    watch,
    resourceVersion: u.searchParams.get("resourceVersion") ?? "",
    userAgent: typeof ua === "string" ? ua : "",
    headers,
  };
}

function verbOf(method: string, named: boolean, watch: boolean): string {
  switch (method) {
    case "GET":
      return watch ? "watch" : named ? "get" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return named ? "delete" : "deletecollection";
    default:
      return method.toLowerCase();
  }
}

export function matchesFilter(f: RuleFilter, r: RequestInfo): boolean {
  if (f.verb && f.verb !== r.verb) return false;
  if (f.resource && f.resource !== r.resource) return false;
  if (f.path && !new RegExp(f.path).test(r.path)) return false;
  if (f.userAgent && !r.userAgent.includes(f.userAgent)) return false;
  if (f.header) {
    const v = r.headers[f.header.name.toLowerCase()];
    if ((Array.isArray(v) ? v.join(",") : v) !== f.header.value) return false;
  }
  return true;
}

/** Whether this fault can apply to the request at all (a 409 only to writes, watch faults only to watches). */
function applicable(fault: Fault, r: RequestInfo): boolean {
  switch (fault.kind) {
    case "status":
      return fault.code !== 409 || isWriteVerb(r.verb);
    case "drop-watch":
    case "stall-watch":
      return r.watch;
    case "expire":
      return r.resourceVersion !== "" && r.resourceVersion !== "0" && (r.watch || r.verb === "list");
    default:
      return true;
  }
}

/** Checks a rule for bad input, naming the field. */
export function validateRule(rule: FaultRule): void {
  const f = rule.fault as Fault | undefined;
  const kinds = ["status", "latency", "drop-watch", "stall-watch", "expire", "reset", "truncate"];
  if (!f || !kinds.includes(f.kind))
    throw new Error(`fault rule: fault.kind must be one of ${kinds.join(", ")} (got ${JSON.stringify(f?.kind)})`);
  if (f.kind === "status" && !(Number.isInteger(f.code) && f.code >= 400 && f.code <= 599))
    throw new Error(`fault rule: fault.code must be an HTTP error status 400..599 (got ${JSON.stringify(f.code)})`);
  if (f.kind === "latency" && !(f.ms >= 0))
    throw new Error(`fault rule: fault.ms must be a number >= 0 (got ${JSON.stringify(f.ms)})`);
  if (rule.probability !== undefined && !(rule.probability >= 0 && rule.probability <= 1))
    throw new Error(`fault rule: probability must be in 0..1 (got ${rule.probability})`);
  if (rule.count !== undefined && !(Number.isInteger(rule.count) && rule.count > 0))
    throw new Error(`fault rule: count must be a positive integer (got ${rule.count})`);
  if (rule.path !== undefined) new RegExp(rule.path);
}

interface ActiveRule {
  id: number;
  rule: FaultRule;
  left: number;
  until: number;
}

/** The rules in force, in the order they were added; each request gets every matching fault, at most one of a kind. */
export class RuleSet {
  private rules: ActiveRule[] = [];
  private nextId = 1;
  private readonly rng: Rng;

  constructor(
    seed: number,
    private readonly now: () => number = Date.now,
  ) {
    this.rng = new Rng(seed);
  }

  add(rule: FaultRule): number {
    validateRule(rule);
    const id = this.nextId++;
    this.rules.push({
      id,
      rule,
      left: rule.count ?? Number.POSITIVE_INFINITY,
      until: rule.durationMs === undefined ? Number.POSITIVE_INFINITY : this.now() + rule.durationMs,
    });
    return id;
  }

  remove(id: number): void {
    this.rules = this.rules.filter((r) => r.id !== id);
  }

  clear(): void {
    this.rules = [];
  }

  list(): Array<FaultRule & { id: number; left: number }> {
    return this.rules.map((r) => ({ ...r.rule, id: r.id, left: r.left }));
  }

  /** The faults for this request; a counted rule is used up by the requests it applied to. */
  pick(r: RequestInfo): Fault[] {
    const now = this.now();
    this.rules = this.rules.filter((x) => x.left > 0 && x.until > now);
    const out: Fault[] = [];
    for (const x of this.rules) {
      if (out.some((f) => f.kind === x.rule.fault.kind)) continue;
      if (!matchesFilter(x.rule, r) || !applicable(x.rule.fault, r)) continue;
      if (x.rule.probability !== undefined && x.rule.probability < 1 && !(this.rng.next() < x.rule.probability))
        continue;
      x.left--;
      out.push(x.rule.fault);
    }
    this.rules = this.rules.filter((x) => x.left > 0);
    return out;
  }
}
