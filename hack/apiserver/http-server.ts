// HTTP front of the API test server: routing, content negotiation, lists, watches and the request log.
import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseYaml } from "yaml";
import { subjectAccessReview, tokenReview } from "./access-reviews.js";
import { ApiError, badRequest, gone, methodNotAllowed } from "./errors.js";
import type { Cluster, DeleteOptions, FieldValidation, WriteContext } from "./cluster.js";
import { storageKey, type ResourceType } from "./resource-types.js";
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "./selectors.js";
import type { Faults } from "./faults.js";
import type { RequestLogEntry } from "./request-log.js";
import type { KubeObject, StoredEvent } from "./store.js";
import { toTable } from "./table.js";
import { jsonText } from "./json-text.js";
import { apiGroup, apiGroupList, apiResourceList, apiVersions } from "./discovery.js";
import { groupVersionDocument, openApiIndex } from "./openapi.js";
import { qualifiedResource } from "./errors.js";
import { decodeProtobuf, isProtobuf } from "./protobuf.js";
import type { PodLogs } from "./pod-logs.js";

export interface HttpContext {
  cluster: Cluster;
  faults: Faults;
  log: RequestLogEntry[];
  serverAddress: () => string;
  bookmarkIntervalMs: number;
  requestLogLimit: number;
  watches: Set<ServerResponse>;
  podLogs: PodLogs;
}

interface Route {
  group: string;
  version: string;
  namespace: string;
  resource: string;
  name: string;
  subresource: string;
  legacyWatch: boolean;
}

const EXPIRED_CONTINUE =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = jsonText(body);
  res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function userOf(req: IncomingMessage): string {
  const auth = req.headers.authorization ?? "";
  const m = /^Bearer\s+(.+)$/i.exec(auth);
  return m ? m[1]!.trim() : "system:anonymous";
}

function parseRoute(segments: string[], cluster: Cluster): Route | undefined {
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === "api" && segments.length >= 2) {
    group = "";
    version = segments[1]!;
    rest = segments.slice(2);
  } else if (segments[0] === "apis" && segments.length >= 3) {
    group = segments[1]!;
    version = segments[2]!;
    rest = segments.slice(3);
  } else return undefined;
  let legacyWatch = false;
  if (rest[0] === "watch") {
    legacyWatch = true;
    rest = rest.slice(1);
  }
  if (rest.length === 0) return undefined;
  const route: Route = { group, version, namespace: "", resource: "", name: "", subresource: "", legacyWatch };
  const isNamespacedResource = (plural: string | undefined): boolean =>
    Boolean(plural && cluster.registry.find(group, version, plural)?.namespaced);
  if (rest[0] === "namespaces" && rest.length >= 3 && isNamespacedResource(rest[2])) {
    route.namespace = rest[1]!;
    route.resource = rest[2]!;
    route.name = rest[3] ?? "";
    route.subresource = rest[4] ?? "";
    if (rest.length > 5) return undefined;
  } else {
    route.resource = rest[0]!;
    route.name = rest[1] ?? "";
    route.subresource = rest[2] ?? "";
    if (rest.length > 3) return undefined;
  }
  return route;
}

function verbOf(method: string, route: Route, query: URLSearchParams): string {
  const watch = route.legacyWatch || query.get("watch") === "true" || query.get("watch") === "1";
  switch (method) {
    case "GET":
      return route.name && !watch ? "get" : watch ? "watch" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return route.name ? "delete" : "deletecollection";
    default:
      return method.toLowerCase();
  }
}

function wantsTable(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? "";
  return accept.split(",").some((a) => /as=Table/.test(a) && /g=meta\.k8s\.io/.test(a));
}

function writeContext(req: IncomingMessage, query: URLSearchParams, user: string): WriteContext {
  const fv = query.get("fieldValidation");
  let fieldValidation: FieldValidation = "Warn";
  if (fv) {
    if (fv !== "Strict" && fv !== "Warn" && fv !== "Ignore") {
      throw badRequest(`fieldValidation parameter unsupported: ${fv}. Must be one of Ignore, Warn, Strict.`);
    }
    fieldValidation = fv;
  }
  const dryRun = query.getAll("dryRun");
  if (dryRun.some((d) => d !== "All"))
    throw badRequest(`Invalid value: ${JSON.stringify(dryRun)}: supported values: "All"`);
  const agent = req.headers["user-agent"] ?? "";
  const fieldManager = query.get("fieldManager") ?? (agent ? agent.split("/")[0] : "unknown");
  return {
    user,
    dryRun: dryRun.length > 0,
    fieldManager,
    fieldManagerExplicit: query.has("fieldManager"),
    fieldValidation,
    warnings: [],
  };
}

function parseBody(raw: string, contentType: string): unknown {
  if (raw.trim() === "") return undefined;
  try {
    if (/yaml/.test(contentType)) return parseYaml(raw);
    return JSON.parse(raw);
  } catch (err) {
    throw badRequest(`the body of the request was in an unknown format - ${(err as Error).message}`);
  }
}

export function createHandler(ctx: HttpContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void handle(ctx, req, res).catch((err) => {
      if (!res.headersSent) {
        const e =
          err instanceof ApiError
            ? err
            : new ApiError(500, "InternalError", `Internal error occurred: ${(err as Error).message}`);
        sendJson(res, e.code, e.toStatus());
      } else res.destroy();
    });
  };
}

async function handle(ctx: HttpContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://localhost");
  const method = req.method ?? "GET";
  const segments = url.pathname
    .split("/")
    .filter((s) => s !== "")
    .map(decodeURIComponent);
  const user = userOf(req);
  const rawBytes = await readBody(req);
  const contentType = String(req.headers["content-type"] ?? "application/json");
  let raw = "";
  let protobufBody: Record<string, unknown> | undefined;
  try {
    if (isProtobuf(contentType) && rawBytes.length > 0) protobufBody = decodeProtobuf(rawBytes);
    else raw = rawBytes.toString("utf8");
  } catch (err) {
    raw = "";
    protobufBody = undefined;
    if (err instanceof ApiError) {
      sendJson(res, err.code, err.toStatus());
      return;
    }
    throw err;
  }
  const types = ctx.cluster.registry.all();
  const entry: RequestLogEntry = {
    time: new Date().toISOString(),
    user,
    verb: method === "GET" ? "get" : method.toLowerCase(),
    method,
    path: url.pathname + url.search,
    group: "",
    version: "",
    resource: "",
    subresource: "",
    namespace: "",
    name: "",
    code: 0,
    userAgent: req.headers["user-agent"],
  };
  const finish = (code: number): void => {
    entry.code = code;
    ctx.log.push(entry);
    // Trim in chunks so a long-running server keeps memory bounded without shifting on every request.
    if (ctx.log.length > ctx.requestLogLimit) ctx.log.splice(0, ctx.log.length - Math.floor(ctx.requestLogLimit * 0.9));
  };
  const respond = (code: number, body: unknown, headers: Record<string, string> = {}): void => {
    finish(code);
    sendJson(res, code, body, headers);
  };
  const fail = (err: unknown): void => {
    const e =
      err instanceof ApiError
        ? err
        : new ApiError(500, "InternalError", `Internal error occurred: ${(err as Error)?.message ?? String(err)}`);
    respond(e.code, e.toStatus(), e.code === 429 ? { "Retry-After": "1" } : {});
  };

  // Non-resource endpoints.
  const p = url.pathname.replace(/\/$/, "") || "/";
  if (method === "GET") {
    if (p === "/version") return respond(200, versionInfo());
    if (p === "/healthz" || p === "/livez" || p === "/readyz") {
      finish(200);
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("ok");
      return;
    }
    if (p === "/api") return respond(200, apiVersions(ctx.serverAddress()));
    if (p === "/apis") return respond(200, apiGroupList(types));
    if (segments[0] === "api" && segments.length === 2) {
      const list = apiResourceList(types, "", segments[1]!);
      return list ? respond(200, list) : fail(notFoundPath());
    }
    if (segments[0] === "apis" && segments.length === 2) {
      const g = apiGroup(types, segments[1]!);
      return g ? respond(200, g) : fail(notFoundPath());
    }
    if (segments[0] === "apis" && segments.length === 3) {
      const list = apiResourceList(types, segments[1]!, segments[2]!);
      return list ? respond(200, list) : fail(notFoundPath());
    }
    if (p === "/openapi/v3") return respond(200, openApiIndex(types, ctx.cluster.registry.groupVersions()));
    if (segments[0] === "openapi" && segments[1] === "v3") {
      const rest = segments.slice(2);
      const [group, version] = rest[0] === "api" ? ["", rest[1]] : [rest[1], rest[2]];
      if (group !== undefined && version && types.some((t) => t.group === group && t.version === version)) {
        return respond(200, groupVersionDocument(types, group, version), {
          "Cache-Control": "public, immutable",
          Etag: `"${ctx.cluster.store.currentRv()}"`,
        });
      }
      return fail(notFoundPath());
    }
  }

  // Reviews are created and answered, never stored (see access-reviews.ts).
  if (
    method === "POST" &&
    (p === "/apis/authentication.k8s.io/v1/tokenreviews" || p === "/apis/authorization.k8s.io/v1/subjectaccessreviews")
  ) {
    try {
      const review = p.endsWith("/tokenreviews") ? tokenReview : subjectAccessReview;
      Object.assign(entry, { verb: "create", group: segments[1], version: "v1", resource: segments[3] });
      const injected = ctx.faults.failureFor("create", segments[3]!);
      if (injected) return fail(injected);
      return respond(201, review(ctx.cluster.store, parseBody(raw, contentType)));
    } catch (err) {
      return fail(err);
    }
  }

  const route = parseRoute(segments, ctx.cluster);
  if (!route) return fail(notFoundPath());
  const query = url.searchParams;
  const verb = verbOf(method, route, query);
  Object.assign(entry, {
    verb,
    group: route.group,
    version: route.version,
    resource: route.resource,
    subresource: route.subresource,
    namespace: route.namespace,
    name: route.name,
  });
  const t = ctx.cluster.registry.find(route.group, route.version, route.resource);
  if (!t) return fail(notFoundPath());
  if (route.subresource && !t.subresources.includes(route.subresource)) return fail(notFoundPath());
  const latency = ctx.faults.latencyFor(verb, route.resource);
  if (latency > 0) await new Promise((r) => setTimeout(r, latency));
  const injected = ctx.faults.failureFor(verb, route.resource);
  if (injected) return fail(injected);

  try {
    const wctx = writeContext(req, query, user);
    if (["create", "update", "patch"].includes(verb)) entry.fieldManager = wctx.fieldManager;
    const warn = (): Record<string, string> =>
      wctx.warnings.length ? { Warning: wctx.warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(", ") } : {};
    const ns = route.namespace || undefined;
    const body = (): unknown => protobufBody ?? parseBody(raw, contentType);
    if (route.subresource === "log") {
      if (verb !== "get") throw methodNotAllowed("the server does not allow this method on the requested resource");
      const text = ctx.podLogs.read(route.namespace, route.name, query);
      finish(200);
      res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    switch (verb) {
      case "get": {
        const obj = ctx.cluster.get(t, ns, route.name);
        if (wantsTable(req))
          return respond(
            200,
            toTable(
              t,
              [obj],
              { resourceVersion: obj.metadata.resourceVersion },
              Date.now(),
              query.get("includeObject") ?? "Metadata",
            ),
          );
        return respond(200, obj);
      }
      case "list":
        return list(ctx, t, ns, query, req, respond);
      case "watch":
        finish(200);
        return watch(ctx, t, ns, route.name, query, req, res);
      case "create": {
        if (route.subresource === "eviction") {
          ctx.cluster.evict(t, route.namespace, route.name, body(), wctx);
          return respond(201, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 });
        }
        if (route.name) throw methodNotAllowed(`the server does not allow this method on the requested resource`);
        const created = ctx.cluster.create(t, ns, body(), wctx);
        return respond(201, created, warn());
      }
      case "update": {
        if (!route.name) throw methodNotAllowed("the server does not allow this method on the requested resource");
        if (route.subresource === "finalize") {
          const current = ctx.cluster.get(t, undefined, route.name);
          const next = { ...current, spec: (body() as KubeObject)?.spec ?? {} };
          ctx.cluster.store.put(storageKey(t.group, t.plural), next);
          return respond(200, ctx.cluster.get(t, undefined, route.name));
        }
        const updated = ctx.cluster.update(t, ns, route.name, body(), wctx, route.subresource);
        return respond(200, updated, warn());
      }
      case "patch": {
        if (!route.name) throw methodNotAllowed("the server does not allow this method on the requested resource");
        const existed =
          ctx.cluster.store.get(storageKey(t.group, t.plural), t.namespaced ? ns : undefined, route.name) !== undefined;
        const patched = ctx.cluster.patch(t, ns, route.name, contentType, raw, wctx, route.subresource);
        return respond(existed ? 200 : 201, patched, warn());
      }
      case "delete": {
        const opts = deleteOptions(body(), query);
        if (opts.dryRun) wctx.dryRun = true;
        const result = ctx.cluster.delete(t, ns, route.name, opts, wctx);
        if (!result.deleted || returnsDeletedObject(t)) return respond(200, result.object);
        return respond(200, {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Success",
          details: { name: route.name, group: t.group, kind: t.plural, uid: result.object.metadata.uid },
        });
      }
      case "deletecollection": {
        const opts = deleteOptions(body(), query);
        if (opts.dryRun) wctx.dryRun = true;
        const items = selectObjects(ctx, t, ns, query);
        const deleted: KubeObject[] = [];
        for (const o of items) {
          try {
            deleted.push(ctx.cluster.delete(t, o.metadata.namespace, o.metadata.name, opts, wctx).object);
          } catch (err) {
            if (!(err instanceof ApiError && err.code === 404)) throw err;
          }
        }
        return respond(200, {
          kind: t.listKind,
          apiVersion: t.group ? `${t.group}/${t.version}` : t.version,
          metadata: { resourceVersion: ctx.cluster.store.currentRvText() },
          items: deleted,
        });
      }
      default:
        throw methodNotAllowed("the server does not allow this method on the requested resource");
    }
  } catch (err) {
    fail(err);
  }
}

function notFoundPath(): ApiError {
  return new ApiError(404, "NotFound", "the server could not find the requested resource", {});
}

function versionInfo(): Record<string, string> {
  return {
    major: "1",
    minor: "33",
    gitVersion: "v1.33.0",
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean",
    buildDate: "2026-01-01T00:00:00Z",
    goVersion: "go1.24.0",
    compiler: "gc",
    platform: "linux/amd64",
  };
}

/** Pods and custom resources answer DELETE with the object, other kinds with a Status. */
function returnsDeletedObject(t: ResourceType): boolean {
  return Boolean(t.crd) || (t.group === "" && t.kind === "Pod");
}

/** As the real DELETE handler: a body's DeleteOptions, or without a body the query's; never a mix. */
function deleteOptions(body: unknown, query: URLSearchParams): DeleteOptions & { dryRun?: boolean } {
  const hasBody = Boolean(body && typeof body === "object");
  const opts: DeleteOptions & { dryRun?: boolean } = hasBody ? { ...(body as DeleteOptions) } : {};
  if (!hasBody) {
    if (query.get("propagationPolicy")) opts.propagationPolicy = query.get("propagationPolicy")!;
    if (query.get("gracePeriodSeconds")) opts.gracePeriodSeconds = Number(query.get("gracePeriodSeconds"));
    if (query.get("orphanDependents")) opts.orphanDependents = query.get("orphanDependents") === "true";
  }
  const bodyDryRun = (body as { dryRun?: string[] } | undefined)?.dryRun;
  if (Array.isArray(bodyDryRun) && bodyDryRun.includes("All")) opts.dryRun = true;
  return opts;
}

/** view: how field selectors see a stored object at t's version (events.k8s.io's regarding.* of a stored core Event). */
function selectorMatcher(
  t: ResourceType,
  query: URLSearchParams,
  view: (o: KubeObject) => KubeObject = (o) => o,
): (o: KubeObject) => boolean {
  const labels = parseLabelSelector(query.get("labelSelector"));
  const fields = parseFieldSelector(query.get("fieldSelector"), t.fieldLabels, qualifiedResource(t.group, t.plural));
  return (o) => matchesLabels(labels, o.metadata?.labels) && (fields.length === 0 || matchesFields(fields, view(o)));
}

function selectObjects(
  ctx: HttpContext,
  t: ResourceType,
  ns: string | undefined,
  query: URLSearchParams,
): KubeObject[] {
  const match = selectorMatcher(t, query);
  return ctx.cluster.list(t, ns).filter(match);
}

interface ContinueToken {
  rv: number;
  start: string;
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: token.rv, start: token.start })).toString("base64");
}

function decodeContinue(text: string): ContinueToken {
  try {
    const parsed = JSON.parse(Buffer.from(text, "base64").toString("utf8")) as { rv: number; start: string };
    if (typeof parsed.rv !== "number" || typeof parsed.start !== "string") throw new Error("bad token");
    return parsed;
  } catch {
    throw badRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  }
}

function list(
  ctx: HttpContext,
  t: ResourceType,
  ns: string | undefined,
  query: URLSearchParams,
  req: IncomingMessage,
  respond: (code: number, body: unknown) => void,
): void {
  const limit = Number(query.get("limit") ?? "0");
  if (limit > 0 && !query.get("fieldSelector") && !wantsTable(req)) return listPage(ctx, t, ns, query, limit, respond);
  let items = selectObjects(ctx, t, ns, query);
  let rv = ctx.cluster.store.currentRv();
  const cont = query.get("continue");
  if (cont) {
    const token = decodeContinue(cont);
    if (token.rv < ctx.cluster.store.compactedRv || token.rv < ctx.faults.expireBefore) throw gone(EXPIRED_CONTINUE);
    rv = token.rv;
    items = items.filter((o) => keyOf(o) > token.start);
  }
  const meta: Record<string, unknown> = { resourceVersion: ctx.cluster.store.rvCodec.format(rv) };
  if (limit > 0 && items.length > limit) {
    const page = items.slice(0, limit);
    meta.continue = encodeContinue({ rv, start: keyOf(page[page.length - 1]!) });
    meta.remainingItemCount = items.length - limit;
    items = page;
  }
  if (wantsTable(req))
    return respond(200, toTable(t, items, meta, Date.now(), query.get("includeObject") ?? "Metadata"));
  respond(200, {
    kind: t.listKind,
    apiVersion: t.group ? `${t.group}/${t.version}` : t.version,
    metadata: meta,
    items,
  });
}

const keyOf = (o: KubeObject): string =>
  o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;

/**
 * One page of a list selected by labels only: matched and counted on the stored objects, and
 * only the page copied and presented, so listing ten thousand pods 500 at a time costs ten
 * thousand copies, not twenty times that. Same answer as the general path in list().
 */
function listPage(
  ctx: HttpContext,
  t: ResourceType,
  ns: string | undefined,
  query: URLSearchParams,
  limit: number,
  respond: (code: number, body: unknown) => void,
): void {
  const labels = parseLabelSelector(query.get("labelSelector"));
  let rv = ctx.cluster.store.currentRv();
  let start: string | undefined;
  const cont = query.get("continue");
  if (cont) {
    const token = decodeContinue(cont);
    if (token.rv < ctx.cluster.store.compactedRv || token.rv < ctx.faults.expireBefore) throw gone(EXPIRED_CONTINUE);
    rv = token.rv;
    start = token.start;
  }
  const matching = ctx.cluster.store
    .listShared(ctx.cluster.key(t), t.namespaced ? ns : undefined)
    .filter((o) => (start === undefined || keyOf(o) > start) && matchesLabels(labels, o.metadata?.labels));
  const page = matching.slice(0, limit).map((o) => ctx.cluster.present(t, o));
  const meta: Record<string, unknown> = { resourceVersion: ctx.cluster.store.rvCodec.format(rv) };
  if (matching.length > limit) {
    meta.continue = encodeContinue({ rv, start: keyOf(page[page.length - 1]!) });
    meta.remainingItemCount = matching.length - limit;
  }
  respond(200, {
    kind: t.listKind,
    apiVersion: t.group ? `${t.group}/${t.version}` : t.version,
    metadata: meta,
    items: page,
  });
}

function watch(
  ctx: HttpContext,
  t: ResourceType,
  ns: string | undefined,
  name: string,
  query: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  // Events carry the stored objects: matched and sent as views, never changed.
  const match = selectorMatcher(t, query, (o) => ctx.cluster.view(t, o));
  const key = storageKey(t.group, t.plural);
  const inScope = (o: KubeObject | undefined): boolean =>
    Boolean(o) &&
    (!t.namespaced || !ns || o!.metadata.namespace === ns) &&
    (!name || o!.metadata.name === name) &&
    match(o!);
  const table = wantsTable(req);
  const includeObject = query.get("includeObject") ?? "Metadata";
  res.writeHead(200, {
    "Content-Type": "application/json",
    "Transfer-Encoding": "chunked",
    "Cache-Control": "no-cache, private",
  });
  res.flushHeaders();
  ctx.watches.add(res);
  const timers: NodeJS.Timeout[] = [];
  let unsubscribe: () => void = () => {};
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    unsubscribe();
    timers.forEach((tm) => clearInterval(tm));
    ctx.watches.delete(res);
    if (!res.writableEnded) res.end();
  };
  res.on("close", close);
  req.on("close", () => {
    if (res.writableEnded || res.destroyed) close();
  });
  const send = (type: string, obj: KubeObject): void => {
    if (closed) return;
    const presented = type === "ERROR" || type === "BOOKMARK" ? obj : ctx.cluster.view(t, obj);
    const object =
      table && type !== "ERROR" && type !== "BOOKMARK"
        ? toTable(t, [presented], { resourceVersion: presented.metadata.resourceVersion }, Date.now(), includeObject)
        : presented;
    // JSON.stringify({ type, object }) with the object's text written once for every watcher and the write's answer.
    res.write(`{"type":${JSON.stringify(type)},"object":${jsonText(object)}}\n`);
  };
  const expired = (rv: string): void => {
    send(
      "ERROR",
      new ApiError(410, "Expired", `too old resource version: ${rv} (${ctx.cluster.store.compactedRv + 1})`).toStatus(),
    );
    close();
  };
  const deliver = (e: StoredEvent): void => {
    if (e.resource !== key) return;
    if (e.type === "ADDED") {
      if (inScope(e.object)) send("ADDED", e.object);
    } else if (e.type === "DELETED") {
      if (inScope(e.old ?? e.object)) send("DELETED", e.object);
    } else {
      const was = inScope(e.old);
      const is = inScope(e.object);
      if (was && is) send("MODIFIED", e.object);
      else if (!was && is) send("ADDED", e.object);
      else if (was && !is) send("DELETED", e.object);
    }
  };
  const rv = query.get("resourceVersion") ?? "";
  if (rv === "" || rv === "0") {
    for (const o of ctx.cluster.store.list(key)) if (inScope(o)) send("ADDED", o);
  } else {
    const since = ctx.cluster.store.rvCodec.parse(rv);
    if (since === undefined) {
      send("ERROR", badRequest(`invalid resource version: ${rv}`).toStatus());
      return close();
    }
    if (ctx.faults.expireNext) {
      ctx.faults.expireNext = false;
      return expired(rv);
    }
    if (since < ctx.faults.expireBefore) return expired(rv);
    const backlog = ctx.cluster.store.eventsSince(since);
    if (!backlog) return expired(rv);
    for (const e of backlog) deliver(e);
  }
  unsubscribe = ctx.cluster.store.subscribe(deliver);
  const bookmarks = query.get("allowWatchBookmarks") === "true";
  const bookmark = () =>
    send("BOOKMARK", {
      kind: t.kind,
      apiVersion: t.group ? `${t.group}/${t.version}` : t.version,
      metadata: { resourceVersion: ctx.cluster.store.currentRvText() },
    });
  if (bookmarks) {
    const ticker = setInterval(bookmark, ctx.bookmarkIntervalMs);
    ticker.unref();
    timers.push(ticker);
  }
  const timeoutSeconds = Number(query.get("timeoutSeconds") ?? "0");
  if (timeoutSeconds > 0) {
    // As kube-apiserver's watch cache: a bookmark right before the deadline, so the client resumes from now.
    const tm = setTimeout(() => {
      if (bookmarks && !closed) bookmark();
      close();
    }, timeoutSeconds * 1000);
    tm.unref();
    timers.push(tm);
  }
}
