// Two ways into the same API server — client-node and the real kubectl — behind one small interface,
// so every conformance scenario runs unchanged through both and their results can be compared.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  ApiException,
  CustomObjectsApi,
  HttpMethod,
  KubernetesObjectApi,
  PatchStrategy,
  RequestContext,
  Watch,
  loadAllYaml,
  setHeaderOptions,
  type KubeConfig,
} from "@kubernetes/client-node";
import { fetch } from "undici";
import { stringify } from "yaml";
import { Kubectl, kubeConfigFor, type KubeconfigSource, type Obj } from "../../hack/apiserver/test-kit.js";
import { kubectlBin } from "../support/paths.js";

export type { Obj };

/** A resource as both clients name it. */
export interface ResourceType {
  apiVersion: string;
  kind: string;
  plural: string;
  /** What a user types after `kubectl get`. */
  kubectlName: string;
  namespaced: boolean;
}

export const types = {
  policy: {
    apiVersion: "healthprobe.io/v1alpha1",
    kind: "HealthProbePolicy",
    plural: "healthprobepolicies",
    kubectlName: "hpp",
    namespaced: true,
  },
  pod: { apiVersion: "v1", kind: "Pod", plural: "pods", kubectlName: "pods", namespaced: true },
  service: { apiVersion: "v1", kind: "Service", plural: "services", kubectlName: "services", namespaced: true },
  configMap: { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", kubectlName: "configmaps", namespaced: true },
  replicaSet: {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    plural: "replicasets",
    kubectlName: "replicasets.apps",
    namespaced: true,
  },
  crd: {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    kubectlName: "customresourcedefinitions",
    namespaced: false,
  },
} satisfies Record<string, ResourceType>;

/** What a refused write looked like to the user: HTTP status (client-node) or exit code (kubectl), and the message. */
export type Outcome = { ok: true } | { ok: false; code: number; message: string };

/** A table as the user reads it: upper-case headers, cells as text ("" for none). */
export interface TableView {
  headers: string[];
  rows: string[][];
}

export interface FieldDoc {
  type: string;
  description: string;
  required: boolean;
}

export interface ApiResourceView {
  name: string;
  kind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
}

/** One watch event as seen by the user: event type, object name and the value of one label. */
export interface SeenEvent {
  type: string;
  name: string;
  label: string;
}

export interface WatchView {
  events: SeenEvent[];
  stop(): Promise<void>;
}

export interface Driver {
  readonly name: string;
  /** What a refusal with this HTTP status looks like through the driver: the status itself, or kubectl's exit code. */
  codeFor(httpStatus: number): number;
  /** Client-side apply of a YAML file (kubectl apply -f; client-node: create, or merge-patch what exists). */
  applyFile(path: string, namespace?: string): Promise<Outcome>;
  apply(objects: Obj[], namespace?: string): Promise<Outcome>;
  /** Server-side apply; the field manager defaults to the client's own ("kubectl", "client-node-apply"). */
  applyServerSide(object: Obj, opts: { namespace: string; force?: boolean; fieldManager?: string }): Promise<Outcome>;
  get(type: ResourceType, namespace: string | undefined, name: string): Promise<Obj | undefined>;
  list(type: ResourceType, namespace: string, labelSelector?: string): Promise<Obj[]>;
  table(type: ResourceType, namespace: string): Promise<TableView>;
  /** The documented fields under a path such as "spec.probe" of the policy kind. */
  explain(type: ResourceType, path: string): Promise<Map<string, FieldDoc>>;
  apiResources(group: string, version: string): Promise<ApiResourceView[]>;
  /** JSON merge patch, of the object or of its status subresource. */
  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    opts?: { subresource?: "status" },
  ): Promise<Outcome>;
  delete(type: ResourceType, namespace: string, name: string): Promise<Outcome>;
  waitEstablished(crdName: string): Promise<void>;
  /** Watches the type in a namespace, recording each event with the value of `label`. */
  watch(type: ResourceType, namespace: string, label: string): Promise<WatchView>;
  close(): void;
}

const TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io";

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf("/");
  return i < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

function basePath(type: ResourceType, namespace?: string): string {
  const { group, version } = splitApiVersion(type.apiVersion);
  const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
  return type.namespaced && namespace ? `${prefix}/namespaces/${namespace}/${type.plural}` : `${prefix}/${type.plural}`;
}

function refusalOf(err: unknown): Outcome {
  if (err instanceof ApiException) {
    let message = String(err.body);
    try {
      const body = typeof err.body === "string" ? JSON.parse(err.body) : err.body;
      message = body.message ?? message;
    } catch {
      // Not a Status: keep the raw body.
    }
    return { ok: false, code: err.code, message };
  }
  throw err;
}

async function outcome(call: Promise<unknown>): Promise<Outcome> {
  try {
    await call;
    return { ok: true };
  } catch (err) {
    return refusalOf(err);
  }
}

/** Flattens an OpenAPI schema's properties into field docs, as `kubectl explain` lists them. */
function fieldDocs(schema: any, components: Record<string, any>): Map<string, FieldDoc> {
  const docs = new Map<string, FieldDoc>();
  const required = new Set<string>(schema.required ?? []);
  for (const [name, raw] of Object.entries<any>(schema.properties ?? {})) {
    const prop = resolve(raw, components);
    docs.set(name, {
      type: typeName(prop, components),
      description: prop.description ?? "",
      required: required.has(name),
    });
  }
  return docs;
}

function resolve(schema: any, components: Record<string, any>): any {
  const ref: string | undefined = schema.$ref ?? schema.allOf?.[0]?.$ref;
  if (!ref) return schema;
  const target = components[ref.replace("#/components/schemas/", "")];
  return {
    ...target,
    ...schema,
    $ref: undefined,
    allOf: undefined,
    description: schema.description ?? target?.description,
  };
}

function typeName(schema: any, components: Record<string, any>): string {
  if (schema.type === "array") return `[]${typeName(resolve(schema.items ?? {}, components), components)}`;
  if (schema.type === "object" || schema.properties) return "Object";
  return schema.type ?? "Object";
}

export class ClientNodeDriver implements Driver {
  readonly name = "client-node";
  private readonly kc: KubeConfig;
  private readonly objects: KubernetesObjectApi;
  private readonly custom: CustomObjectsApi;

  constructor(server: KubeconfigSource) {
    this.kc = kubeConfigFor(server, "client-node-user");
    this.objects = KubernetesObjectApi.makeApiClient(this.kc);
    this.custom = this.kc.makeApiClient(CustomObjectsApi);
  }

  codeFor(httpStatus: number): number {
    return httpStatus;
  }

  applyFile(path: string, namespace?: string): Promise<Outcome> {
    // Like kubectl apply -f: a directory means its YAML files in name order.
    const files = statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((f) => /\.(ya?ml|json)$/.test(f))
          .sort()
          .map((f) => join(path, f))
      : [path];
    return this.apply(
      files.flatMap((f) => loadAllYaml(readFileSync(f, "utf8")).filter(Boolean)),
      namespace,
    );
  }

  async apply(objects: Obj[], namespace?: string): Promise<Outcome> {
    for (const original of objects) {
      const obj: Obj = structuredClone(original);
      if (namespace && obj.kind !== "Namespace" && obj.kind !== "CustomResourceDefinition")
        obj.metadata = { ...obj.metadata, namespace };
      const existing = await this.objects.read(obj as any).catch((err) => {
        if (err instanceof ApiException && err.code === 404) return undefined;
        throw new Error(`reading ${obj.kind} ${obj.metadata?.name}`, { cause: err });
      });
      const result = await outcome(
        existing
          ? this.objects.patch(obj, undefined, undefined, "client-node-apply", undefined, PatchStrategy.MergePatch)
          : this.objects.create(obj, undefined, undefined, "client-node-apply"),
      );
      if (!result.ok) return result;
    }
    return { ok: true };
  }

  applyServerSide(object: Obj, opts: { namespace: string; force?: boolean; fieldManager?: string }): Promise<Outcome> {
    const obj = { ...object, metadata: { ...object.metadata, namespace: opts.namespace } };
    return outcome(
      this.objects.patch(
        obj,
        undefined,
        undefined,
        opts.fieldManager ?? "client-node-apply",
        opts.force ?? false,
        PatchStrategy.ServerSideApply,
      ),
    );
  }

  async get(type: ResourceType, namespace: string | undefined, name: string): Promise<Obj | undefined> {
    try {
      return (await this.objects.read({
        apiVersion: type.apiVersion,
        kind: type.kind,
        metadata: { name, ...(namespace ? { namespace } : {}) },
      })) as Obj;
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw new Error(`reading ${type.kind} ${namespace}/${name}`, { cause: err });
    }
  }

  async list(type: ResourceType, namespace: string, labelSelector?: string): Promise<Obj[]> {
    const list = await this.objects.list(
      type.apiVersion,
      type.kind,
      namespace,
      undefined,
      undefined,
      undefined,
      undefined,
      labelSelector,
    );
    return list.items as Obj[];
  }

  async table(type: ResourceType, namespace: string): Promise<TableView> {
    const table = await this.rawGet(basePath(type, namespace), TABLE_ACCEPT);
    return {
      headers: table.columnDefinitions
        .filter((c: any) => c.priority === 0)
        .map((c: any) => String(c.name).toUpperCase()),
      rows: table.rows.map((r: any) =>
        r.cells
          .filter((_: unknown, i: number) => table.columnDefinitions[i].priority === 0)
          .map((c: unknown) => (c === null || c === undefined ? "" : String(c))),
      ),
    };
  }

  async explain(type: ResourceType, path: string): Promise<Map<string, FieldDoc>> {
    const { group, version } = splitApiVersion(type.apiVersion);
    const index = await this.rawGet("/openapi/v3", "application/json");
    const entry = index.paths[group ? `apis/${group}/${version}` : `api/${version}`];
    const doc = await this.rawGet(entry.serverRelativeURL, "application/json");
    const components = doc.components.schemas as Record<string, any>;
    const root = Object.values<any>(components).find((s) =>
      s["x-kubernetes-group-version-kind"]?.some(
        (g: any) => g.group === group && g.version === version && g.kind === type.kind,
      ),
    );
    if (!root) throw new Error(`no OpenAPI v3 schema for ${type.kind} in ${entry.serverRelativeURL}`);
    let schema = root;
    for (const part of path.split(".")) schema = resolve(schema.properties[part], components);
    return fieldDocs(schema, components);
  }

  async apiResources(group: string, version: string): Promise<ApiResourceView[]> {
    const list = await this.custom.getAPIResources({ group, version });
    return list.resources
      .filter((r) => !r.name.includes("/"))
      .map((r) => ({
        name: r.name,
        kind: r.kind,
        namespaced: r.namespaced,
        shortNames: r.shortNames ?? [],
        categories: r.categories ?? [],
      }));
  }

  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    opts: { subresource?: "status" } = {},
  ): Promise<Outcome> {
    const { group, version } = splitApiVersion(type.apiVersion);
    if (opts.subresource === "status") {
      return outcome(
        this.custom.patchNamespacedCustomObjectStatus(
          { group, version, namespace, plural: type.plural, name, body },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        ),
      );
    }
    const spec = {
      apiVersion: type.apiVersion,
      kind: type.kind,
      ...(body as object),
      metadata: { ...(body as Obj).metadata, name, namespace },
    };
    return outcome(
      this.objects.patch(spec, undefined, undefined, "client-node-patch", undefined, PatchStrategy.MergePatch),
    );
  }

  delete(type: ResourceType, namespace: string, name: string): Promise<Outcome> {
    return outcome(
      this.objects.delete({ apiVersion: type.apiVersion, kind: type.kind, metadata: { name, namespace } }),
    );
  }

  async waitEstablished(crdName: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const crd = await this.get(types.crd, undefined, crdName);
      // Established is not yet served: kube-apiserver answers 429 "storage is (re)initializing" until its watch cache is ready.
      if (
        crd?.status?.conditions?.some((c: any) => c.type === "Established" && c.status === "True") &&
        (await this.servesKindOf(crd))
      )
        return;
      if (Date.now() > deadline) throw new Error(`CustomResourceDefinition ${crdName} not established within 20 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private async servesKindOf(crd: Obj): Promise<boolean> {
    const version = crd.spec.versions.find((v: any) => v.storage)?.name ?? crd.spec.versions[0].name;
    return this.objects.list(`${crd.spec.group}/${version}`, crd.spec.names.kind).then(
      () => true,
      () => false,
    );
  }

  async watch(type: ResourceType, namespace: string, label: string): Promise<WatchView> {
    const events: SeenEvent[] = [];
    const list = await this.objects.list(type.apiVersion, type.kind, namespace);
    // Like `kubectl get -w`: first what exists, then what changes from the list's resourceVersion on.
    for (const o of list.items)
      events.push({ type: "ADDED", name: o.metadata!.name!, label: o.metadata?.labels?.[label] ?? "" });
    const controller = await new Watch(this.kc).watch(
      basePath(type, namespace),
      { resourceVersion: list.metadata!.resourceVersion },
      (phase, obj: Obj) => {
        if (phase !== "BOOKMARK" && phase !== "ERROR")
          events.push({ type: phase, name: obj.metadata!.name!, label: obj.metadata?.labels?.[label] ?? "" });
      },
      () => undefined,
    );
    return {
      events,
      stop: async () => controller.abort(),
    };
  }

  close(): void {}

  /** GET through client-node's own credentials and connection settings, for what it has no typed call for. */
  private async rawGet(path: string, accept: string): Promise<any> {
    const ctx = new RequestContext(this.kc.getCurrentCluster()!.server + path, HttpMethod.GET);
    await this.kc.applySecurityAuthentication(ctx);
    const res = await fetch(ctx.getUrl(), {
      headers: { ...ctx.getHeaders(), Accept: accept },
      dispatcher: ctx.getDispatcher() as any,
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}: ${text}`);
    return JSON.parse(text);
  }
}

export class KubectlDriver implements Driver {
  readonly name = "kubectl";
  private readonly kubectl: Kubectl;
  private files = 0;

  constructor(server: KubeconfigSource) {
    this.kubectl = new Kubectl(server);
  }

  codeFor(_httpStatus: number): number {
    // kubectl reports every refused request with exit status 1.
    return 1;
  }

  applyFile(path: string, namespace?: string): Promise<Outcome> {
    return this.run(["apply", "-f", path, ...(namespace ? ["-n", namespace] : [])]);
  }

  apply(objects: Obj[], namespace?: string): Promise<Outcome> {
    return this.applyFile(this.file(objects), namespace);
  }

  applyServerSide(object: Obj, opts: { namespace: string; force?: boolean; fieldManager?: string }): Promise<Outcome> {
    return this.run([
      "apply",
      "--server-side",
      ...(opts.force ? ["--force-conflicts"] : []),
      ...(opts.fieldManager ? [`--field-manager=${opts.fieldManager}`] : []),
      "-n",
      opts.namespace,
      "-f",
      this.file([object]),
    ]);
  }

  async get(type: ResourceType, namespace: string | undefined, name: string): Promise<Obj | undefined> {
    const out = await this.kubectl.run([
      "get",
      type.kubectlName,
      name,
      "-o",
      "json",
      "--show-managed-fields",
      ...(namespace ? ["-n", namespace] : []),
    ]);
    if (out.code !== 0) {
      if (out.stderr.includes("NotFound")) return undefined;
      throw new Error(`kubectl get ${type.kubectlName} ${name}: exit ${out.code}: ${out.stderr}`);
    }
    return JSON.parse(out.stdout);
  }

  async list(type: ResourceType, namespace: string, labelSelector?: string): Promise<Obj[]> {
    const out = await this.ok([
      "get",
      type.kubectlName,
      "-n",
      namespace,
      "-o",
      "json",
      ...(labelSelector ? ["-l", labelSelector] : []),
    ]);
    return JSON.parse(out).items;
  }

  async table(type: ResourceType, namespace: string): Promise<TableView> {
    const lines = (await this.ok(["get", type.kubectlName, "-n", namespace]))
      .split("\n")
      .filter((l) => l.trim() !== "");
    const header = lines[0]!;
    // kubectl aligns columns: each header starts where its cells start, so cut every row at the header's offsets.
    const starts = [...header.matchAll(/\S+/g)].map((m) => m.index!);
    const cut = (line: string) =>
      starts.map((s, i) => line.slice(s, i + 1 < starts.length ? starts[i + 1] : undefined).trim());
    return { headers: cut(header), rows: lines.slice(1).map(cut) };
  }

  async explain(type: ResourceType, path: string): Promise<Map<string, FieldDoc>> {
    const out = await this.ok(["explain", `${type.kubectlName}.${path}`]);
    const fields = out.split(/^FIELDS:\s*$/m)[1] ?? "";
    const docs = new Map<string, FieldDoc>();
    let current: { name: string; doc: FieldDoc; lines: string[] } | undefined;
    const flush = () => {
      if (current)
        docs.set(current.name, { ...current.doc, description: current.lines.join(" ").replace(/\s+/g, " ").trim() });
    };
    for (const line of fields.split("\n")) {
      const head = /^ {2}(\S+)\t<([^>]+)>( -required-)?$/.exec(line);
      if (head) {
        flush();
        current = { name: head[1]!, doc: { type: head[2]!, description: "", required: Boolean(head[3]) }, lines: [] };
      } else if (current && /^ {4}\S/.test(line)) {
        current.lines.push(line.trim());
      }
    }
    flush();
    return docs;
  }

  async apiResources(group: string, _version: string): Promise<ApiResourceView[]> {
    const lines = (await this.ok(["api-resources", `--api-group=${group}`, "-o", "wide", "--no-headers"]))
      .split("\n")
      .filter((l) => l.trim() !== "");
    return lines.map((line) => {
      // NAME SHORTNAMES APIVERSION NAMESPACED KIND VERBS CATEGORIES; SHORTNAMES may be empty, APIVERSION contains "/".
      const cols = line.trim().split(/\s+/);
      const av = cols.findIndex((c) => c.includes("/"));
      return {
        name: cols[0]!,
        shortNames: av === 2 ? cols[1]!.split(",") : [],
        namespaced: cols[av + 1] === "true",
        kind: cols[av + 2]!,
        categories: cols[av + 4] ? cols[av + 4]!.split(",") : [],
      };
    });
  }

  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    body: unknown,
    opts: { subresource?: "status" } = {},
  ): Promise<Outcome> {
    return this.run([
      "patch",
      type.kubectlName,
      name,
      "-n",
      namespace,
      "--type=merge",
      "-p",
      JSON.stringify(body),
      ...(opts.subresource ? [`--subresource=${opts.subresource}`] : []),
    ]);
  }

  delete(type: ResourceType, namespace: string, name: string): Promise<Outcome> {
    return this.run(["delete", type.kubectlName, name, "-n", namespace, "--wait=true", "--timeout=20s"]);
  }

  async waitEstablished(crdName: string): Promise<void> {
    await this.ok(["wait", "--for=condition=Established", "--timeout=20s", `customresourcedefinitions/${crdName}`]);
  }

  async watch(type: ResourceType, namespace: string, label: string): Promise<WatchView> {
    const events: SeenEvent[] = [];
    const cache = join(this.kubectl.home, `watch-cache-${++this.files}`);
    const child = spawn(
      kubectlBin,
      [
        "--kubeconfig",
        this.kubectl.kubeconfig,
        "--cache-dir",
        cache,
        "get",
        type.kubectlName,
        "-n",
        namespace,
        "-w",
        "--output-watch-events",
        "-L",
        label,
      ],
      {
        env: { ...process.env, HOME: this.kubectl.home },
      },
    );
    let buffered = "";
    let header = true;
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl: number;
      while ((nl = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (header) {
          header = false;
          continue;
        }
        // EVENT NAME READY STATUS RESTARTS AGE <LABEL>: rows are aligned one by one as they arrive, so split on blanks.
        const cols = line.trim().split(/\s+/);
        events.push({ type: cols[0]!, name: cols[1]!, label: cols[cols.length - 1]! });
      }
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    return {
      events,
      stop: async () => {
        child.kill("SIGTERM");
        await exited;
      },
    };
  }

  close(): void {
    this.kubectl.cleanup();
  }

  private file(objects: Obj[]): string {
    return this.kubectl.file(`objects-${++this.files}.yaml`, objects.map((o) => stringify(o)).join("---\n"));
  }

  private async run(args: string[]): Promise<Outcome> {
    const out = await this.kubectl.run(args);
    return out.code === 0 ? { ok: true } : { ok: false, code: out.code, message: out.stderr };
  }

  private async ok(args: string[]): Promise<string> {
    const out = await this.kubectl.run(args);
    if (out.code !== 0) throw new Error(`kubectl ${args.join(" ")}: exit ${out.code}: ${out.stderr}`);
    return out.stdout;
  }
}

export const drivers: Array<[string, (server: KubeconfigSource) => Driver]> = [
  ["client-node", (server) => new ClientNodeDriver(server)],
  ["kubectl", (server) => new KubectlDriver(server)],
];
