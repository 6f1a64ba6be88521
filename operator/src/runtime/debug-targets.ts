// /debug/targets, bounded: `?namespace=` keeps one namespace's policies, `?limit=` (default 1000,
// at most 10000) caps the page, and `?continue=` resumes after the last entry of the previous page
// (ordered by policy, then pod uid). The page is written in chunks, yielding to the event loop
// between them and waiting for the socket to drain, so a large page never holds the loop for its
// whole serialisation.
import type { ServerResponse } from "node:http";

export const DEFAULT_DEBUG_LIMIT = 1000;
export const MAX_DEBUG_LIMIT = 10_000;
const CHUNK = 200;

/** One target as the health store lists it; the rest of its fields are passed through. */
export interface DebugTargetEntry {
  policy: string;
  uid: string;
}

/** What /debug/targets reads: the targets, and other figures shown beside them (the scheduler's). */
export interface DebugSnapshot {
  targets: readonly DebugTargetEntry[];
  [other: string]: unknown;
}

export interface DebugQuery {
  namespace?: string;
  limit: number;
  /** The sort key of the last entry already served. */
  after?: string;
}

export interface DebugPage {
  targets: DebugTargetEntry[];
  /** More entries match after this page: ask again with `continue`. */
  truncated: boolean;
  continue?: string;
}

const sortKey = (t: DebugTargetEntry) => `${t.policy}\u0000${t.uid}`;

/** Reads the query; a bad value is an error naming the parameter. */
export function parseDebugQuery(params: URLSearchParams): DebugQuery | string {
  const q: DebugQuery = { limit: DEFAULT_DEBUG_LIMIT };
  const namespace = params.get("namespace");
  if (namespace !== null && namespace !== "") q.namespace = namespace;
  const limit = params.get("limit");
  if (limit !== null) {
    const n = /^\d+$/.test(limit) ? Number(limit) : NaN;
    if (!(n >= 1 && n <= MAX_DEBUG_LIMIT)) return `limit must be an integer from 1 to ${MAX_DEBUG_LIMIT}, got ${JSON.stringify(limit)}`;
    q.limit = n;
  }
  const cont = params.get("continue");
  if (cont !== null && cont !== "") {
    const after = Buffer.from(cont, "base64url").toString("utf8");
    if (!after.includes("\u0000")) return `continue is not a marker this endpoint returned, got ${JSON.stringify(cont)}`;
    q.after = after;
  }
  return q;
}

/** The page of targets the query asks for, in (policy, uid) order. */
export function pageOf(targets: readonly DebugTargetEntry[], q: DebugQuery): DebugPage {
  const prefix = q.namespace === undefined ? undefined : `${q.namespace}/`;
  const matching = targets
    .filter((t) => prefix === undefined || t.policy.startsWith(prefix))
    .map((t) => ({ key: sortKey(t), t }))
    .filter((e) => q.after === undefined || e.key > q.after)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const page = matching.slice(0, q.limit);
  const truncated = matching.length > page.length;
  const out: DebugPage = { targets: page.map((e) => e.t), truncated };
  if (truncated) out.continue = Buffer.from(page[page.length - 1]!.key, "utf8").toString("base64url");
  return out;
}

/** Writes `{...others, limit, truncated, continue?, targets: [...]}` a chunk at a time. */
export async function writeDebugPage(res: ServerResponse, snapshot: DebugSnapshot, q: DebugQuery): Promise<void> {
  const { targets: all, ...others } = snapshot;
  const page = pageOf(all, q);
  const head = { ...others, limit: q.limit, truncated: page.truncated, ...(page.continue !== undefined ? { continue: page.continue } : {}) };
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
  await write(res, `${JSON.stringify(head).slice(0, -1)}${Object.keys(head).length > 0 ? "," : ""}"targets":[`);
  for (let i = 0; i < page.targets.length; i += CHUNK) {
    // A client gone mid-page: nothing more to write.
    if (res.destroyed) return;
    const chunk = page.targets.slice(i, i + CHUNK).map((t) => JSON.stringify(t)).join(",");
    await write(res, (i > 0 ? "," : "") + chunk);
    // Let probes and reconciles run between chunks.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  res.end("]}");
}

function write(res: ServerResponse, text: string): Promise<void> {
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}
