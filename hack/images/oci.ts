// Writes an OCI image archive (the image layout of the OCI image spec, as one tar) from layers of
// files and a config: what `ctr images import`, `buildah` (`oci-archive:`) and
// `kind load image-archive` read. No clock and no machine detail goes into it, so the same inputs
// always give the same manifest digest.
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { writeTar, type TarEntry } from "./tar.js";

export interface ImageConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  User?: string;
  Env?: string[];
  WorkingDir?: string;
  Labels?: Record<string, string>;
  ExposedPorts?: Record<string, Record<string, never>>;
}

export interface ImageSpec {
  /** The full reference, e.g. localhost/healthprobe-test/pause:1. */
  name: string;
  layers: TarEntry[][];
  config: ImageConfig;
  /** Gzip the layers (smaller archives); plain tar when false. */
  gzip?: boolean;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}

export interface BuiltImage {
  archive: Buffer;
  /** The manifest's digest: what containerd and registries call the image's digest. */
  digest: string;
  manifest: Descriptor;
}

export const MEDIA = {
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar",
  layerGzip: "application/vnd.oci.image.layer.v1.tar+gzip",
} as const;

/** The fixed creation time written into every config: a build time would change the digest. */
const CREATED = "2000-01-01T00:00:00Z";

export function sha256(data: Buffer): string {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

function blob(mediaType: string, data: Buffer): { descriptor: Descriptor; data: Buffer } {
  return { descriptor: { mediaType, digest: sha256(data), size: data.length }, data };
}

/** Keys in a fixed order at every depth, so JSON bytes never depend on how an object was built. */
function canonicalJson(value: unknown): Buffer {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v && typeof v === "object")
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
      );
    return v;
  };
  return Buffer.from(JSON.stringify(sortKeys(value)));
}

export function validateName(name: string): void {
  // Enough of the reference grammar to catch a missing tag or stray characters early.
  if (
    !/^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:\/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(
      name,
    )
  ) {
    throw new Error(`image name ${JSON.stringify(name)}: want registry/path:tag (lowercase path, a tag)`);
  }
}

export function buildImage(spec: ImageSpec): BuiltImage {
  validateName(spec.name);
  const layers = spec.layers.map((entries) => {
    const tar = writeTar(entries);
    const data = spec.gzip ? gzipSync(tar, { level: 9 }) : tar;
    return { diffId: sha256(tar), ...blob(spec.gzip ? MEDIA.layerGzip : MEDIA.layer, data) };
  });
  const config = blob(
    MEDIA.config,
    canonicalJson({
      architecture: "amd64",
      os: "linux",
      created: CREATED,
      config: spec.config,
      rootfs: { type: "layers", diff_ids: layers.map((l) => l.diffId) },
      history: layers.map(() => ({ created: CREATED, created_by: "hack/images" })),
    }),
  );
  const manifest = blob(
    MEDIA.manifest,
    canonicalJson({
      schemaVersion: 2,
      mediaType: MEDIA.manifest,
      config: config.descriptor,
      layers: layers.map((l) => l.descriptor),
    }),
  );
  const index = canonicalJson({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [
      {
        ...manifest.descriptor,
        platform: { architecture: "amd64", os: "linux" },
        // containerd names the image after the first; buildah and skopeo match the second.
        annotations: { "io.containerd.image.name": spec.name, "org.opencontainers.image.ref.name": spec.name },
      },
    ],
  });
  const blobs = new Map<string, Buffer>();
  for (const b of [...layers, config, manifest]) blobs.set(b.descriptor.digest, b.data);
  const entries: TarEntry[] = [
    { path: "oci-layout", type: "file", mode: 0o644, content: Buffer.from('{"imageLayoutVersion":"1.0.0"}') },
    { path: "index.json", type: "file", mode: 0o644, content: index },
    { path: "blobs", type: "dir", mode: 0o755 },
    { path: "blobs/sha256", type: "dir", mode: 0o755 },
    ...[...blobs].map(([digest, data]): TarEntry => ({
      path: `blobs/sha256/${digest.slice(7)}`,
      type: "file",
      mode: 0o644,
      content: data,
    })),
  ];
  return { archive: writeTar(entries), digest: manifest.descriptor.digest, manifest: manifest.descriptor };
}
