import { describe, expect, it } from "@jest/globals";
import { gunzipSync } from "node:zlib";
import { Layer } from "../../hack/images/layer.js";
import { buildImage, sha256, type ImageSpec } from "../../hack/images/oci.js";
import { readTar } from "../../hack/images/tar.js";

const longPath = `usr/lib/${"deep/".repeat(40)}file.js`;

function spec(overrides: Partial<ImageSpec> = {}): ImageSpec {
  const layer = new Layer()
    .file("bin/hello", "#!/bin/sh\necho hello\n", 0o755)
    .file(longPath, "module.exports = 1;\n")
    .symlink("bin/sh", "/bin/busybox")
    .dir("tmp", 0o1777);
  return {
    name: "localhost/healthprobe-test/sample:1",
    layers: [layer.list()],
    config: { Entrypoint: ["/bin/hello"], User: "65532:65532" },
    ...overrides,
  };
}

function blobs(archive: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const e of readTar(archive))
    if (e.path.startsWith("blobs/sha256/") && e.type === "file") out.set(`sha256:${e.path.slice(13)}`, e.content!);
  return out;
}

function file(archive: Buffer, path: string): Buffer {
  const found = readTar(archive).find((e) => e.path === path);
  if (!found?.content) throw new Error(`${path} missing from the archive`);
  return found.content;
}

describe("OCI image archives", () => {
  it.each([
    ["plain layers", false],
    ["gzipped layers", true],
  ])("the same inputs give the same manifest digest and bytes, with %s", (_, gzip) => {
    const a = buildImage(spec({ gzip }));
    const b = buildImage(spec({ gzip }));
    expect(a.digest).toBe(b.digest);
    expect(sha256(a.archive)).toBe(sha256(b.archive));
  });

  it.each<[string, Partial<ImageSpec>]>([
    ["another name", { name: "localhost/healthprobe-test/sample:2" }],
    ["another user", { config: { Entrypoint: ["/bin/hello"], User: "0" } }],
    ["another file", { layers: [new Layer().file("bin/hello", "other").list()] }],
  ])("a change of %s changes the archive", (_, overrides) => {
    expect(sha256(buildImage(spec(overrides)).archive)).not.toBe(sha256(buildImage(spec()).archive));
  });

  it.each([false, true])("every descriptor's digest and size match its blob (gzip %s)", (gzip) => {
    const { archive, digest } = buildImage(spec({ gzip }));
    const all = blobs(archive);
    const index = JSON.parse(file(archive, "index.json").toString());
    expect(JSON.parse(file(archive, "oci-layout").toString())).toEqual({ imageLayoutVersion: "1.0.0" });
    expect(index.manifests).toHaveLength(1);
    const [desc] = index.manifests;
    expect(desc.annotations).toEqual({
      "io.containerd.image.name": "localhost/healthprobe-test/sample:1",
      "org.opencontainers.image.ref.name": "localhost/healthprobe-test/sample:1",
    });
    expect(desc.digest).toBe(digest);
    for (const [d, data] of all) expect(sha256(data)).toBe(d);
    const manifest = JSON.parse(all.get(desc.digest)!.toString());
    expect(all.get(desc.digest)!.length).toBe(desc.size);
    for (const d of [manifest.config, ...manifest.layers]) expect(all.get(d.digest)?.length).toBe(d.size);
    const config = JSON.parse(all.get(manifest.config.digest)!.toString());
    expect(config.config).toEqual({ Entrypoint: ["/bin/hello"], User: "65532:65532" });
    const layerTar = all.get(manifest.layers[0].digest)!;
    expect(config.rootfs.diff_ids).toEqual([sha256(gzip ? gunzipSync(layerTar) : layerTar)]);
  });

  it("a layer lists its entries sorted, with parents, fixed owners and modes, and long paths intact", () => {
    const { archive } = buildImage(spec());
    const manifest = JSON.parse(blobs(archive).get(buildImage(spec()).digest)!.toString());
    const entries = readTar(blobs(archive).get(manifest.layers[0].digest)!);
    const paths = entries.map((e) => e.path);
    expect(paths).toEqual([...paths].sort());
    expect(paths).toEqual(expect.arrayContaining(["bin", "bin/hello", "bin/sh", "tmp", "usr", "usr/lib", longPath]));
    expect(entries.find((e) => e.path === "bin/hello")).toMatchObject({ type: "file", mode: 0o755, uid: 0, gid: 0 });
    expect(entries.find((e) => e.path === "bin/sh")).toMatchObject({ type: "symlink", linkname: "/bin/busybox" });
    expect(entries.find((e) => e.path === "tmp")).toMatchObject({ type: "dir", mode: 0o1777 });
    expect(entries.find((e) => e.path === longPath)?.content?.toString()).toBe("module.exports = 1;\n");
  });

  it.each(["Sample:1", "localhost/sample", "localhost/sample:bad tag"])(
    "the image name %j is refused with a clear error",
    (name) => {
      expect(() => buildImage(spec({ name }))).toThrow(/image name .* want registry\/path:tag/);
    },
  );

  it.each(["../etc/passwd", "/"])("the layer path %j is refused", (path) => {
    expect(() => new Layer().file(path, "x")).toThrow(/layer path .*not a path inside the image/);
  });
});
