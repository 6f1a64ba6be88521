// The API's verbs over the store: create, update, patch, delete, eviction, with the real semantics
// (optimistic concurrency, spec/status split, generation, finalizers, dry run, field validation).
import { randomUUID } from "node:crypto";
import { parse as parseYaml } from "yaml";
import {
  ApiError,
  STALE_OBJECT,
  alreadyExists,
  badRequest,
  conflict,
  fieldErrors,
  forbidden,
  invalid,
  notFound,
  unsupportedMediaType,
  type FieldError,
} from "./errors.js";
import { apiVersionOf, hasStatus, storageKey, type ResourceType } from "./resource-types.js";
import { ResourceRegistry } from "./registry.js";
import { Store, clone, type KubeObject } from "./store.js";
import { applyDefaults, prune, validateSchema } from "./crd-schema.js";
import { establishedCrdStatus } from "./crd-serving.js";
import { applyBuiltinDefaults, prepareBuiltinCreate } from "./builtin-defaults.js";
import { planPodDeletion } from "./pod-deletion.js";
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, canonical } from "./patch.js";
import { validateMetadata } from "./validation/index.js";
import { matchesLabelSelectorObject } from "./selectors.js";
import { CORE_EVENT_VERSION, convertEvent } from "./event-conversion.js";
import { jsonEqual } from "./json-equal.js";
import { markUnchanging } from "./json-text.js";

export type FieldValidation = "Strict" | "Warn" | "Ignore";

export interface WriteContext {
  user: string;
  dryRun: boolean;
  fieldManager?: string;
  /** Set when the request named its fieldManager (apply requires it). */
  fieldManagerExplicit?: boolean;
  fieldValidation: FieldValidation;
  /** Warnings for the Warning header (fieldValidation=Warn). */
  warnings: string[];
}

export interface DeleteOptions {
  propagationPolicy?: string;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  orphanDependents?: boolean;
}

export interface DeleteResult {
  /** The object, when it was only marked for deletion or the kind returns deleted objects. */
  object: KubeObject;
  /** True when the object is gone from storage. */
  deleted: boolean;
}

const isMap = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object" && !Array.isArray(v);

const OBJECT_META_FIELDS = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
]);

const GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

function randomSuffix(): string {
  let s = "";
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
  return s;
}

/**
 * Whether the kind tracks metadata.generation: custom resources always, built-ins with a
 * spec/status split, and EndpointSlices (their strategy bumps it on any change but metadata's).
 */
function tracksGeneration(t: ResourceType): boolean {
  return Boolean(t.crd) || t.kind === "EndpointSlice" || (hasStatus(t) && t.kind !== "Namespace" && t.kind !== "Node");
}

/** What moves generation beyond the spec: an EndpointSlice's labels (endpointslice/strategy.go). */
function generationLabels(t: ResourceType, obj: KubeObject): string {
  return t.kind === "EndpointSlice" ? JSON.stringify(canonical(obj.metadata.labels ?? {})) : "";
}

/** Everything but metadata and status: what moves generation. */
function specPart(obj: KubeObject): unknown {
  const { metadata: _m, status: _s, ...rest } = obj;
  return canonical(rest);
}

/** The same object but for resourceVersion and managedFields. */
function sameContent(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject): KubeObject => {
    const { resourceVersion: _rv, managedFields: _mf, ...metadata } = o.metadata;
    return { ...o, metadata };
  };
  return jsonEqual(strip(a), strip(b));
}

export class Cluster {
  readonly registry = new ResourceRegistry();
  /** Set by the server: a test topology with pods on loopback must be able to list them as endpoints. */
  /** Set by the server when a kubelet (the stand-in) finishes terminating pods: pod deletes are then graceful. */
  podsHaveKubelet = false;
  private gcScheduled = false;
  /** view() per stored object (at the version last asked for). */
  private readonly views = new WeakMap<KubeObject, KubeObject>();
  private stopped = false;

  constructor(
    readonly store: Store,
    private readonly now: () => Date = () => new Date(),
  ) {}

  timestamp(): string {
    return this.timestampAt(this.now().getTime());
  }

  /** RFC 3339 with whole seconds, as metav1.Time serialises. */
  timestampAt(ms: number): string {
    return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
  }

  stop(): void {
    this.stopped = true;
  }

  key(t: ResourceType): string {
    return storageKey(t.group, t.plural);
  }

  /** The object as a client sees it at version t: converted (Events), apiVersion rewritten and CRD defaults applied on read. */
  present(t: ResourceType, obj: KubeObject): KubeObject {
    const { apiVersion: _a, kind: _k, metadata, ...rest } = convertEvent(clone(obj), apiVersionOf(t));
    const out: KubeObject = { apiVersion: apiVersionOf(t), kind: t.kind, metadata, ...rest };
    if (t.crd?.schema) applyDefaults(out, t.crd.schema);
    return out;
  }

  /**
   * present() of a stored object for what is only serialised or read, a watch event or a write's
   * answer: without a copy where nothing needs changing (a custom resource's schema defaults go on
   * one copy; an Event is presented afresh). Made once per stored object and version, shared with
   * the stored object, and marked unchanging (its JSON is written once for the answer and every
   * watcher): nobody may change it.
   */
  view(t: ResourceType, obj: KubeObject): KubeObject {
    if (obj.kind === "Event") return this.present(t, obj);
    const apiVersion = apiVersionOf(t);
    const known = this.views.get(obj);
    if (known?.apiVersion === apiVersion) return known;
    let view: KubeObject;
    // A custom resource's defaults go on a copy, once per stored version rather than once per watcher.
    if (t.crd?.schema) view = this.present(t, obj);
    else {
      const { apiVersion: _a, kind: _k, metadata, ...rest } = obj;
      view = { apiVersion, kind: t.kind, metadata, ...rest };
    }
    markUnchanging(view);
    if (this.store.freeze) Object.freeze(view);
    this.views.set(obj, view);
    return view;
  }

  /** The form storage keeps: events.k8s.io Events as core v1 Events, so both APIs serve one object. */
  private toStorage(obj: KubeObject): KubeObject {
    return convertEvent(obj, CORE_EVENT_VERSION);
  }

  get(t: ResourceType, namespace: string | undefined, name: string): KubeObject {
    const obj = this.store.get(this.key(t), t.namespaced ? namespace : undefined, name);
    if (!obj) throw notFound(t.group, t.plural, name);
    return this.present(t, obj);
  }

  list(t: ResourceType, namespace: string | undefined): KubeObject[] {
    return this.store.list(this.key(t), t.namespaced ? namespace : undefined).map((o) => this.present(t, o));
  }

  private checkNamespace(t: ResourceType, namespace: string | undefined, name: string): void {
    if (!t.namespaced) return;
    if (!namespace) throw badRequest("the server could not find the requested resource");
    const ns = this.store.getShared("/namespaces", undefined, namespace);
    if (!ns) throw notFound("", "namespaces", namespace);
    if (ns.metadata.deletionTimestamp || ns.status?.phase === "Terminating") {
      throw forbidden(
        t.group,
        t.plural,
        name,
        `unable to create new content in namespace ${namespace} because it is being terminated`,
      );
    }
  }

  private checkTypeMeta(t: ResourceType, body: KubeObject): void {
    if (body.apiVersion !== undefined && body.apiVersion !== apiVersionOf(t)) {
      const bodyGroup = String(body.apiVersion).includes("/") ? String(body.apiVersion).split("/")[0] : "";
      if (bodyGroup !== t.group)
        throw badRequest(
          `the API version in the data (${body.apiVersion}) does not match the expected API version (${apiVersionOf(t)})`,
        );
    }
    if (body.kind !== undefined && body.kind !== t.kind) {
      throw badRequest(
        `${t.kind} in version "${t.version}" cannot be handled as a ${t.kind}: the kind in the data (${body.kind}) does not match the expected kind (${t.kind})`,
      );
    }
  }

  /** Prunes, defaults and validates; returns field errors and records unknown fields. */
  private admit(
    t: ResourceType,
    obj: KubeObject,
    old: KubeObject | undefined,
    subresource: string,
    ctx: WriteContext,
  ): FieldError[] {
    const errors: FieldError[] = [];
    const unknownFields = Object.keys(obj.metadata ?? {})
      .filter((k) => !OBJECT_META_FIELDS.has(k))
      .map((k) => `metadata.${k}`);
    const kind = t.crd ? "custom" : t.group === "" ? t.kind : `${t.kind}.${t.group}`;
    errors.push(...validateMetadata(obj.metadata ?? {}, kind, !old));
    if (t.crd) {
      const schema = t.crd.schema;
      const pruned: string[] = [];
      if (schema) {
        const { metadata, apiVersion, kind, ...rest } = obj;
        const body: KubeObject = rest;
        prune(body, { ...schema, properties: { ...(schema.properties ?? {}) } }, "", pruned);
        for (const k of Object.keys(obj)) if (!["metadata", "apiVersion", "kind"].includes(k)) delete obj[k];
        Object.assign(obj, body, { metadata, apiVersion, kind });
        for (const k of ["metadata", "apiVersion", "kind"]) {
          if (schema.properties?.[k]) continue;
        }
        applyDefaults(obj, schema);
        const schemaForValidation = { ...schema, properties: { ...(schema.properties ?? {}) } };
        delete schemaForValidation.properties.metadata;
        delete schemaForValidation.properties.apiVersion;
        delete schemaForValidation.properties.kind;
        const { metadata: _m, ...content } = obj;
        const schemaErrors = validateSchema(content, schemaForValidation, "");
        // The real validator walks properties in Go map order; sorting keeps messages deterministic.
        schemaErrors.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
        // CEL rules (x-kubernetes-validations) are not run here: kube-apiserver is the reference.
        errors.push(...schemaErrors);
      }
      unknownFields.push(...pruned);
    } else {
      const known = new Set(t.topLevelFields ?? []);
      unknownFields.push(...Object.keys(obj).filter((k) => known.size > 0 && !known.has(k)));
      applyBuiltinDefaults(t.group, t.kind, obj);
    }
    this.reportUnknownFields(unknownFields.sort(), ctx);
    return errors;
  }

  private reportUnknownFields(unknown: string[], ctx: WriteContext): void {
    if (unknown.length === 0 || ctx.fieldValidation === "Ignore") return;
    const messages = unknown.map((f) => `unknown field "${f}"`);
    if (ctx.fieldValidation === "Strict") {
      throw badRequest(`strict decoding error: ${messages.join(", ")}`);
    }
    ctx.warnings.push(...messages);
  }

  /** `body` becomes the stored object (no copy): the caller hands over an object of its own (a parsed request body) and does not use it again. */
  create(t: ResourceType, namespace: string | undefined, body: unknown, ctx: WriteContext): KubeObject {
    if (!isMap(body)) throw badRequest("Object 'Kind' is missing in '" + JSON.stringify(body) + "'");
    const obj = body as KubeObject;
    this.checkTypeMeta(t, obj);
    obj.apiVersion = apiVersionOf(t);
    obj.kind = t.kind;
    obj.metadata = isMap(obj.metadata) ? obj.metadata : {};
    const meta = obj.metadata;
    if (t.namespaced) {
      if (meta.namespace && namespace && meta.namespace !== namespace) {
        throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
      }
      meta.namespace = namespace ?? meta.namespace;
    } else delete meta.namespace;
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomSuffix()}`;
    this.checkNamespace(t, meta.namespace, meta.name ?? "");
    // The real storage refuses a create that carries a resourceVersion: it was probably copied from a read.
    const givenRv = String(meta.resourceVersion ?? "");
    if (givenRv !== "" && givenRv !== "0" && this.store.rvCodec.parse(givenRv) !== undefined) {
      throw new ApiError(500, "", "resourceVersion should not be set on objects to be created");
    }
    for (const k of [
      "uid",
      "resourceVersion",
      "creationTimestamp",
      "deletionTimestamp",
      "deletionGracePeriodSeconds",
      "generation",
      "selfLink",
      "managedFields",
    ])
      delete meta[k];
    if (t.crd && hasStatus(t)) delete obj.status;
    if (!t.crd) prepareBuiltinCreate(t.group, t.kind, obj);
    const errors = this.admit(t, obj, undefined, "", ctx);
    if (errors.length) throw invalid(t.group, t.kind, meta.name ?? "", errors);
    if (this.store.has(this.key(t), meta.namespace, meta.name)) throw alreadyExists(t.group, t.plural, meta.name);
    meta.uid = randomUUID();
    meta.creationTimestamp = this.timestamp();
    if (tracksGeneration(t)) meta.generation = 1;
    if (t.group === "apiextensions.k8s.io" && t.kind === "CustomResourceDefinition")
      obj.status = establishedCrdStatus(obj, this.timestamp());
    if (ctx.dryRun) return this.present(t, obj);
    const stored = this.store.write(this.key(t), this.toStorage(obj));
    this.afterWrite(t, stored);
    return this.view(t, stored);
  }

  /** As create: `body` is the caller's to hand over, and parts of it are stored without a copy. */
  update(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    ctx: WriteContext,
    subresource: string,
  ): KubeObject {
    if (!isMap(body)) throw badRequest("Object 'Kind' is missing");
    const ns = t.namespaced ? namespace : undefined;
    const old = this.store.getShared(this.key(t), ns, name);
    if (!old) throw notFound(t.group, t.plural, name);
    const obj = body as KubeObject;
    this.checkTypeMeta(t, obj);
    obj.metadata = isMap(obj.metadata) ? obj.metadata : {};
    if (obj.metadata.name !== undefined && obj.metadata.name !== name) {
      throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
    }
    if (t.namespaced && obj.metadata.namespace && obj.metadata.namespace !== namespace) {
      throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
    }
    const rv = obj.metadata.resourceVersion;
    if (rv === undefined || rv === "") {
      // Custom resources refuse unconditional updates; built-ins accept them.
      if (t.crd) {
        throw invalid(t.group, t.kind, name, [
          fieldErrors.invalid("metadata.resourceVersion", 0, "must be specified for an update"),
        ]);
      }
    } else if (rv !== old.metadata.resourceVersion) {
      throw conflict(t.group, t.plural, name, STALE_OBJECT);
    }
    return this.commitUpdate(t, old, obj, ctx, subresource);
  }

  /**
   * Applies the spec/status split, immutable metadata, validation, generation and no-op detection.
   * `stored` is the stored object itself: read, never changed. Returns a view of what was stored.
   */
  private commitUpdate(
    t: ResourceType,
    stored: KubeObject,
    incoming: KubeObject,
    ctx: WriteContext,
    subresource: string,
  ): KubeObject {
    // Compared and validated at the request's version, as the real update sees both objects decoded alike.
    const old = convertEvent(stored, apiVersionOf(t));
    let obj: KubeObject;
    if (subresource === "status") {
      // A built-in's fields but status as stored, shared with the stored object and never changed
      // (its defaults are already there); a custom resource is pruned and defaulted in place: a copy.
      obj = t.crd ? clone(old) : { ...old, metadata: { ...old.metadata } };
      if (incoming.status === undefined) delete obj.status;
      else obj.status = incoming.status;
    } else {
      obj = clone(incoming);
      obj.metadata = isMap(obj.metadata) ? obj.metadata : {};
      if (hasStatus(t)) {
        if (old.status === undefined) delete obj.status;
        else obj.status = clone(old.status);
      }
      const meta = obj.metadata;
      for (const k of [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "name",
        "namespace",
        "generation",
      ]) {
        if (old.metadata[k] === undefined) delete meta[k];
        else meta[k] = old.metadata[k];
      }
    }
    obj.apiVersion = apiVersionOf(t);
    obj.kind = t.kind;
    // Fields are not tracked per manager here (kube-apiserver is the reference for managedFields).
    delete obj.metadata.managedFields;
    obj.metadata.resourceVersion = old.metadata.resourceVersion;
    if (t.kind === "Namespace" && t.group === "" && subresource !== "status") obj.spec = clone(old.spec);
    if (t.kind === "Service" && t.group === "" && subresource !== "status" && obj.spec && old.spec) {
      // Allocated values carry over when an update leaves them out, as the real service REST does.
      if (!obj.spec.clusterIP) obj.spec.clusterIP = old.spec.clusterIP;
      if (!obj.spec.clusterIPs) obj.spec.clusterIPs = clone(old.spec.clusterIPs);
      if (!obj.spec.ipFamilies && old.spec.ipFamilies) obj.spec.ipFamilies = clone(old.spec.ipFamilies);
      if (!obj.spec.ipFamilyPolicy && old.spec.ipFamilyPolicy) obj.spec.ipFamilyPolicy = old.spec.ipFamilyPolicy;
    }
    if (t.kind === "Pod" && t.group === "" && subresource !== "status" && old.spec) {
      // Pod specs are immutable apart from images, activeDeadlineSeconds and tolerations additions.
      const allowed = clone(old.spec);
      (allowed.containers ?? []).forEach((c: any, i: number) => {
        const n = obj.spec?.containers?.[i];
        if (n?.image) c.image = n.image;
      });
      if (obj.spec?.activeDeadlineSeconds !== undefined) allowed.activeDeadlineSeconds = obj.spec.activeDeadlineSeconds;
      if (obj.spec?.tolerations !== undefined) allowed.tolerations = obj.spec.tolerations;
      const candidate = clone(obj.spec);
      applyBuiltinDefaults("", "Pod", { metadata: {}, spec: candidate });
      if (JSON.stringify(canonical(candidate)) !== JSON.stringify(canonical(allowed))) {
        throw invalid("", "Pod", old.metadata.name, [
          fieldErrors.forbidden(
            "spec",
            "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
          ),
        ]);
      }
    }
    const errors = this.admit(t, obj, old, subresource, ctx);
    if (errors.length) throw invalid(t.group, t.kind, old.metadata.name, errors);
    if (tracksGeneration(t) && subresource !== "status") {
      const bumped =
        JSON.stringify(specPart(obj)) !== JSON.stringify(specPart(old)) ||
        generationLabels(t, obj) !== generationLabels(t, old);
      obj.metadata.generation = (old.metadata.generation ?? 0) + (bumped ? 1 : 0);
    }
    if (t.group === "apiextensions.k8s.io" && t.kind === "CustomResourceDefinition" && subresource !== "status") {
      obj.status = establishedCrdStatus({ ...obj, status: old.status }, this.timestamp());
      const oldConds = (old.status?.conditions ?? []) as Array<Record<string, any>>;
      (obj.status as any).conditions = (obj.status as any).conditions.map((c: any) => ({
        ...c,
        lastTransitionTime: oldConds.find((o) => o.type === c.type)?.lastTransitionTime ?? c.lastTransitionTime,
      }));
    }
    if (sameContent(obj, old)) return this.view(t, old);
    if (ctx.dryRun) return this.present(t, obj);
    // An object whose finalizers are gone is removed unless a graceful deletion still runs (pods).
    if (
      obj.metadata.deletionTimestamp &&
      (obj.metadata.finalizers ?? []).length === 0 &&
      Number(obj.metadata.deletionGracePeriodSeconds ?? 0) === 0
    ) {
      const gone = this.store.remove(this.key(t), old.metadata.namespace, old.metadata.name);
      this.afterRemove(t, gone!);
      const out = this.present(t, obj);
      return out;
    }
    const written = this.store.write(this.key(t), this.toStorage(obj));
    this.afterWrite(t, written);
    return this.view(t, written);
  }

  patch(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    contentType: string,
    rawBody: string,
    ctx: WriteContext,
    subresource: string,
  ): KubeObject {
    const ns = t.namespaced ? namespace : undefined;
    const type = contentType.split(";")[0]!.trim().toLowerCase();
    if (type === "application/apply-patch+yaml" || type === "application/apply-patch+cbor") {
      if (!ctx.fieldManager || !ctx.fieldManagerExplicit) {
        throw invalid("meta.k8s.io", "PatchOptions", "", [
          fieldErrors.required("fieldManager", "is required for apply patch"),
        ]);
      }
      let applied: unknown;
      try {
        applied = parseYaml(rawBody);
      } catch (err) {
        throw badRequest(`error decoding YAML: ${(err as Error).message}`);
      }
      if (!isMap(applied)) throw badRequest("couldn't get version/kind; json parse error");
      if (applied.metadata?.name !== undefined && applied.metadata.name !== name) {
        throw badRequest(
          `the name of the object (${applied.metadata.name}) does not match the name on the URL (${name})`,
        );
      }
      this.checkTypeMeta(t, applied);
      const current = this.store.getShared(this.key(t), ns, name);
      if (!current) {
        if (subresource) throw notFound(t.group, t.plural, name);
        return this.create(t, namespace, { ...applied, metadata: { ...(applied.metadata ?? {}), name } }, ctx);
      }
      // Simplified apply: the configuration is merged into the live object (a strategic merge for
      // built-ins, a merge patch for custom resources); no field ownership, conflicts or removal of
      // fields no longer applied (kube-apiserver is the reference for those).
      const base = this.present(t, current);
      const merged = t.crd ? applyMergePatch(base, applied) : applyStrategicMergePatch(t.kind, base, applied);
      const rv = applied.metadata?.resourceVersion;
      if (rv && rv !== current.metadata.resourceVersion) throw conflict(t.group, t.plural, name, STALE_OBJECT);
      return this.commitUpdate(t, current, merged as KubeObject, ctx, subresource);
    }
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch (err) {
      throw badRequest(`error decoding patch: ${(err as Error).message}`);
    }
    const current = this.store.getShared(this.key(t), ns, name);
    if (!current) throw notFound(t.group, t.plural, name);
    const base = this.present(t, current);
    let patched: KubeObject;
    switch (type) {
      case "application/merge-patch+json":
        patched = applyMergePatch(base, body) as KubeObject;
        break;
      case "application/json-patch+json":
        patched = applyJsonPatch(base, body);
        break;
      case "application/strategic-merge-patch+json":
        if (t.crd) throw unsupportedMediaType(type);
        patched = applyStrategicMergePatch(t.kind, base, body);
        break;
      default:
        throw unsupportedMediaType(type);
    }
    if (!isMap(patched)) throw badRequest("patch produced a non-object");
    patched.metadata = isMap(patched.metadata) ? patched.metadata : {};
    if (
      patched.metadata.resourceVersion !== undefined &&
      patched.metadata.resourceVersion !== current.metadata.resourceVersion
    ) {
      throw conflict(t.group, t.plural, name, STALE_OBJECT);
    }
    if (patched.metadata.name !== undefined && patched.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${patched.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    if (patched.metadata.uid !== undefined && patched.metadata.uid !== current.metadata.uid) {
      throw conflict(
        t.group,
        t.plural,
        name,
        `Precondition failed: UID in precondition: ${patched.metadata.uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    return this.commitUpdate(t, current, patched, ctx, subresource);
  }

  delete(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions,
    ctx: WriteContext,
  ): DeleteResult {
    const ns = t.namespaced ? namespace : undefined;
    const current = this.store.get(this.key(t), ns, name);
    if (!current) throw notFound(t.group, t.plural, name);
    const pre = opts.preconditions ?? {};
    if (pre.uid && pre.uid !== current.metadata.uid) {
      throw conflict(
        t.group,
        t.plural,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    if (pre.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(
        t.group,
        t.plural,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
      );
    }
    const policy =
      opts.propagationPolicy ??
      (opts.orphanDependents === true ? "Orphan" : opts.orphanDependents === false ? "Background" : "Background");
    if (!["Background", "Foreground", "Orphan"].includes(policy)) {
      throw invalid(t.group, t.kind, name, [
        fieldErrors.notSupported("propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"]),
      ]);
    }
    const obj = clone(current);
    const isPod = t.group === "" && t.kind === "Pod";
    let gracefulSeconds: number | undefined;
    if (isPod) {
      const plan = planPodDeletion(obj, opts.gracePeriodSeconds, this.now().getTime(), this.podsHaveKubelet);
      // Finalizers cannot be changed through DeleteOptions while a graceful deletion is pending.
      if (plan.kind === "pending") return { object: this.present(t, obj), deleted: false };
      if (plan.kind === "graceful") {
        if (!obj.metadata.deletionTimestamp && obj.metadata.generation !== undefined) obj.metadata.generation += 1;
        obj.metadata.deletionTimestamp = this.timestampAt(plan.atMs);
        obj.metadata.deletionGracePeriodSeconds = plan.periodSeconds;
        gracefulSeconds = plan.periodSeconds;
      }
    }
    const finalizers: string[] = [...((obj.metadata.finalizers ?? []) as string[])];
    if (policy === "Orphan" && !finalizers.includes("orphan")) finalizers.push("orphan");
    if (policy === "Foreground" && !finalizers.includes("foregroundDeletion")) finalizers.push("foregroundDeletion");
    const isNamespace = t.group === "" && t.kind === "Namespace";
    if (gracefulSeconds !== undefined) {
      if (finalizers.length) obj.metadata.finalizers = finalizers;
      // The marked pod is written first, as the real registry does, even when it goes at once.
      if (ctx.dryRun)
        return { object: this.present(t, obj), deleted: gracefulSeconds === 0 && finalizers.length === 0 };
      const stored = this.store.put(this.key(t), obj);
      if (gracefulSeconds > 0 || finalizers.length > 0) {
        this.afterWrite(t, stored);
        return { object: this.present(t, stored), deleted: false };
      }
      const gone = this.store.remove(this.key(t), ns, name)!;
      this.afterRemove(t, gone);
      return { object: this.present(t, gone), deleted: true };
    }
    if (finalizers.length > 0 || isNamespace) {
      const changed = !obj.metadata.deletionTimestamp || finalizers.length !== (obj.metadata.finalizers ?? []).length;
      if (!changed) return { object: this.present(t, obj), deleted: false };
      if (finalizers.length) obj.metadata.finalizers = finalizers;
      if (!obj.metadata.deletionTimestamp) {
        obj.metadata.deletionTimestamp = this.timestamp();
        obj.metadata.deletionGracePeriodSeconds = 0;
        if (obj.metadata.generation !== undefined) obj.metadata.generation += 1;
      }
      if (isNamespace) obj.status = { ...(obj.status ?? {}), phase: "Terminating" };
      if (ctx.dryRun) return { object: this.present(t, obj), deleted: false };
      const stored = this.store.put(this.key(t), obj);
      this.afterWrite(t, stored);
      return { object: this.present(t, stored), deleted: false };
    }
    if (ctx.dryRun) return { object: this.present(t, obj), deleted: true };
    const gone = this.store.remove(this.key(t), ns, name)!;
    this.afterRemove(t, gone);
    return { object: this.present(t, gone), deleted: true };
  }

  /** POST pods/<name>/eviction: honours PodDisruptionBudgets like the real eviction REST. */
  evict(t: ResourceType, namespace: string, name: string, body: unknown, ctx: WriteContext): void {
    const pod = this.store.get(this.key(t), namespace, name);
    if (!pod) throw notFound("", "pods", name);
    const eviction = isMap(body) ? body : {};
    const deleteOptions: DeleteOptions = isMap(eviction.deleteOptions) ? (eviction.deleteOptions as DeleteOptions) : {};
    const phase = pod.status?.phase;
    // Terminal or already terminating pods are deleted without consulting budgets.
    if (phase === "Succeeded" || phase === "Failed" || pod.metadata.deletionTimestamp) {
      if (!pod.metadata.deletionTimestamp || deleteOptions.propagationPolicy)
        this.delete(t, namespace, name, deleteOptions, ctx);
      return;
    }
    const pdbs = this.store
      .list(storageKey("policy", "poddisruptionbudgets"), namespace)
      .filter(
        (p) =>
          isMap(p.spec?.selector) &&
          Object.keys(p.spec.selector).length > 0 &&
          matchesLabelSelectorObject(p.spec.selector, pod.metadata.labels),
      );
    if (pdbs.length > 1) {
      throw new ApiError(
        500,
        "InternalError",
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
      );
    }
    const pdb = pdbs[0];
    if (pdb) {
      const status = (pdb.status ?? {}) as Record<string, any>;
      if (Number(status.observedGeneration ?? 0) < Number(pdb.metadata.generation ?? 0)) {
        throw new ApiError(
          429,
          "TooManyRequests",
          "Cannot evict pod as it would violate the pod's disruption budget.",
          {
            causes: [
              {
                reason: "DisruptionBudget",
                message: `The disruption budget ${pdb.metadata.name} is still being processed by the server.`,
              },
            ],
          },
        );
      }
      const allowed = Number(status.disruptionsAllowed ?? 0);
      if (allowed < 1) {
        throw new ApiError(
          429,
          "TooManyRequests",
          "Cannot evict pod as it would violate the pod's disruption budget.",
          {
            causes: [
              {
                reason: "DisruptionBudget",
                message: `The disruption budget ${pdb.metadata.name} needs ${status.desiredHealthy ?? 0} healthy pods and has ${status.currentHealthy ?? 0} currently`,
              },
            ],
          },
        );
      }
      if (!ctx.dryRun) {
        const updated = clone(pdb);
        updated.status = {
          ...status,
          disruptionsAllowed: allowed - 1,
          disruptedPods: { ...(status.disruptedPods ?? {}), [name]: this.timestamp() },
        };
        this.store.put(storageKey("policy", "poddisruptionbudgets"), updated);
      }
    }
    this.delete(t, namespace, name, deleteOptions, ctx);
  }

  private afterWrite(t: ResourceType, obj: KubeObject): void {
    if (t.group === "apiextensions.k8s.io" && t.kind === "CustomResourceDefinition") this.refreshCrds();
    // Collect only when something may be owed: a deletion in progress or an owner that does not exist.
    const owners = (obj.metadata.ownerReferences ?? []) as Array<{ uid: string }>;
    if (obj.metadata.deletionTimestamp || owners.some((r) => !this.store.hasUid(r.uid))) this.scheduleGc();
  }

  private afterRemove(t: ResourceType, obj: KubeObject): void {
    if (t.group === "apiextensions.k8s.io" && t.kind === "CustomResourceDefinition") {
      // Instances go with their definition.
      const group = obj.spec?.group;
      const plural = obj.spec?.names?.plural;
      if (group && plural) {
        const key = storageKey(group, plural);
        for (const o of this.store.list(key)) this.store.remove(key, o.metadata.namespace, o.metadata.name);
      }
      this.refreshCrds();
    }
    const terminatingNamespace =
      Boolean(obj.metadata.namespace) &&
      Boolean(this.store.get("/namespaces", undefined, obj.metadata.namespace)?.metadata.deletionTimestamp);
    if (this.store.hasDependents(obj.metadata.uid) || terminatingNamespace || t.kind === "Namespace") this.scheduleGc();
  }

  refreshCrds(): void {
    this.registry.setCrds(this.store.list(storageKey("apiextensions.k8s.io", "customresourcedefinitions")));
  }

  private scheduleGc(): void {
    if (this.gcScheduled || this.stopped) return;
    this.gcScheduled = true;
    setImmediate(() => {
      this.gcScheduled = false;
      if (!this.stopped) this.collectGarbage();
    });
  }

  /**
   * One pass of the garbage collector and namespace controller: deletes dependents whose owners are gone,
   * handles foreground/orphan finalizers, and empties terminating namespaces.
   */
  collectGarbage(): void {
    const all: Array<{ key: string; obj: KubeObject }> = [];
    for (const key of this.store.resources()) for (const obj of this.store.list(key)) all.push({ key, obj });
    const byUid = new Map(all.map((e) => [e.obj.metadata.uid as string, e]));
    const dependentsOf = (uid: string): Array<{ key: string; obj: KubeObject }> =>
      all.filter((e) => ((e.obj.metadata.ownerReferences ?? []) as Array<{ uid: string }>).some((r) => r.uid === uid));
    let again = false;
    const removeFinalizer = (key: string, obj: KubeObject, finalizer: string): void => {
      const fresh = this.store.get(key, obj.metadata.namespace, obj.metadata.name);
      if (!fresh) return;
      fresh.metadata.finalizers = ((fresh.metadata.finalizers ?? []) as string[]).filter((f) => f !== finalizer);
      if (fresh.metadata.finalizers.length === 0) {
        delete fresh.metadata.finalizers;
        const gone = this.store.remove(key, fresh.metadata.namespace, fresh.metadata.name);
        if (gone) again = true;
      } else this.store.put(key, fresh);
    };
    const deleteInternal = (key: string, obj: KubeObject, policy = "Background"): void => {
      const t = this.registry.byStorageKey(key);
      if (!t) {
        this.store.remove(key, obj.metadata.namespace, obj.metadata.name);
        again = true;
        return;
      }
      try {
        const r = this.delete(
          t,
          obj.metadata.namespace,
          obj.metadata.name,
          { propagationPolicy: policy },
          {
            user: "system:serviceaccount:kube-system:generic-garbage-collector",
            dryRun: false,
            fieldValidation: "Ignore",
            warnings: [],
          },
        );
        if (r.deleted) again = true;
      } catch {
        // Already gone.
      }
    };
    for (const { key, obj } of all) {
      const meta = obj.metadata;
      const finalizers = (meta.finalizers ?? []) as string[];
      if (meta.deletionTimestamp && finalizers.includes("orphan")) {
        for (const dep of dependentsOf(meta.uid)) {
          const fresh = this.store.get(dep.key, dep.obj.metadata.namespace, dep.obj.metadata.name);
          if (!fresh) continue;
          fresh.metadata.ownerReferences = (fresh.metadata.ownerReferences as Array<{ uid: string }>).filter(
            (r) => r.uid !== meta.uid,
          );
          if (fresh.metadata.ownerReferences.length === 0) delete fresh.metadata.ownerReferences;
          this.store.put(dep.key, fresh);
        }
        removeFinalizer(key, obj, "orphan");
        continue;
      }
      if (meta.deletionTimestamp && finalizers.includes("foregroundDeletion")) {
        const deps = dependentsOf(meta.uid);
        for (const dep of deps) if (!dep.obj.metadata.deletionTimestamp) deleteInternal(dep.key, dep.obj, "Foreground");
        if (deps.length === 0) removeFinalizer(key, obj, "foregroundDeletion");
        continue;
      }
      if (key === "/namespaces" && meta.deletionTimestamp) {
        const content = all.filter((e) => e.obj.metadata.namespace === meta.name && e.key !== "/namespaces");
        for (const c of content) if (!c.obj.metadata.deletionTimestamp) deleteInternal(c.key, c.obj);
        if (content.length === 0) {
          const fresh = this.store.get(key, undefined, meta.name);
          if (fresh && (fresh.metadata.finalizers ?? []).length === 0) {
            this.store.remove(key, undefined, meta.name);
            again = true;
          }
        }
        continue;
      }
      const owners = (meta.ownerReferences ?? []) as Array<{ uid: string }>;
      if (owners.length === 0) continue;
      const live = owners.filter((r) => byUid.has(r.uid));
      if (live.length === owners.length) continue;
      if (live.length === 0) {
        if (!meta.deletionTimestamp) deleteInternal(key, obj);
      } else {
        const fresh = this.store.get(key, meta.namespace, meta.name);
        if (fresh) {
          fresh.metadata.ownerReferences = live;
          this.store.put(key, fresh);
        }
      }
    }
    if (again) this.scheduleGc();
    else if (all.some((e) => e.obj.metadata.deletionTimestamp && e.key === "/namespaces")) {
      // Namespaces wait for content with finalizers: look again shortly.
      setTimeout(() => this.scheduleGc(), 50).unref();
    }
  }
}
