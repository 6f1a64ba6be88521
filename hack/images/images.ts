// The images the project builds without a registry: the test node's pause and workload images,
// the two base images the Dockerfile is built on here, and the chart's helm test image.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Layer } from "./layer.js";
import type { ImageSpec } from "./oci.js";

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, "../..");
export const SCRATCH = join(ROOT, ".scratch/images");
const PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/** A static Go binary from this directory's module, without build ids or paths: the same source gives the same bytes. */
function goBinary(pkg: string): string {
  const out = join(SCRATCH, "bin", pkg);
  mkdirSync(dirname(out), { recursive: true });
  execFileSync("go", ["build", "-trimpath", "-ldflags", "-s -w -buildid=", "-o", out, `./${pkg}`], {
    cwd: HERE,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, CGO_ENABLED: "0", GOWORK: "off", GOFLAGS: "-buildvcs=false" },
  });
  return out;
}

function nodeBinary(): string {
  const path = execFileSync("sh", ["-c", "command -v node"], { encoding: "utf8" }).trim();
  if (!path) throw new Error("node: not on PATH; the Node base images copy the local Node runtime");
  return path;
}

function passwd(users: [string, number, string][]): string {
  return users.map(([name, id, home]) => `${name}:x:${id}:${id}:${name}:${home}:/sbin/nologin\n`).join("");
}

function group(users: [string, number, string][]): string {
  return users.map(([name, id]) => `${name}:x:${id}:\n`).join("");
}

const USERS: [string, number, string][] = [
  ["root", 0, "/root"],
  ["nobody", 65534, "/nonexistent"],
  ["nonroot", 65532, "/home/nonroot"],
];

/** /etc/passwd, /etc/group, /tmp and the homes: what programs look up even in a minimal image. */
function baseFiles(layer: Layer): Layer {
  return layer
    .file("etc/passwd", passwd(USERS))
    .file("etc/group", group(USERS))
    .dir("tmp", 0o1777)
    .dir("root", 0o700)
    .dir("home/nonroot", 0o700, 65532);
}

/** Where `busybox --install` puts each applet (Debian's: wget and timeout in usr/bin, sh in bin). */
function busyboxApplets(): string[] {
  return execFileSync("/bin/busybox", ["--list-full"], { encoding: "utf8" }).split("\n").filter(Boolean);
}

/** Debian's busybox-static with every applet linked where `--install` would put it. */
function busybox(layer: Layer): Layer {
  layer.host("/bin/busybox", "bin/busybox");
  for (const applet of busyboxApplets()) if (applet !== "bin/busybox") layer.symlink(applet, "/bin/busybox");
  return layer;
}

/**
 * Debian builds busybox without FEATURE_WGET_TIMEOUT, yet its getopt32 still takes `-T N` and stores N
 * through a null pointer: `wget -T 5` dies of SIGSEGV (exit 139) before it connects. Upstream's
 * defconfig, and so busybox:1.36, has -T, and the chart's helm test passes it. This stand-in bounds
 * the whole fetch with busybox `timeout` (exit 143 when it fires) where upstream bounds each connect
 * and read: the same outcome for one small GET.
 */
export const WGET_TIMEOUT_SHIM = `#!/bin/sh
t=
n=$#
while [ "$n" -gt 0 ]; do
  a=$1
  shift
  n=$((n - 1))
  case $a in
    -T) t=$1; shift; n=$((n - 1)) ;;
    -T*) t=\${a#-T} ;;
    *) set -- "$@" "$a" ;;
  esac
done
[ -z "$t" ] || exec /bin/busybox timeout "$t" /bin/busybox wget "$@"
exec /bin/busybox wget "$@"
`;

/** Whether this busybox's wget has -T (its usage names `-T SEC` when built with it). */
export function wgetHasTimeout(busyboxPath = "/bin/busybox"): boolean {
  const help = spawnSync(busyboxPath, ["wget", "--help"], { encoding: "utf8" });
  return `${help.stdout}${help.stderr}`.includes("-T SEC");
}

function pause(): ImageSpec {
  return {
    name: "localhost/healthprobe-test/pause:1",
    layers: [new Layer().host(goBinary("pause"), "pause").list()],
    config: { Entrypoint: ["/pause"], User: "65535:65535" },
  };
}

/** The test workload image's name, as pods ask for it (imagePullPolicy Never). */
export const WORKLOAD_IMAGE = "localhost/healthprobe-test/workload:1";

function workload(): ImageSpec {
  return {
    name: WORKLOAD_IMAGE,
    layers: [new Layer().host(goBinary("workload"), "workload").list()],
    config: {
      Entrypoint: ["/workload"],
      User: "65532:65532",
      ExposedPorts: { "8080/tcp": {}, "9000/tcp": {}, "9090/tcp": {}, "9901/tcp": {} },
    },
    gzip: true,
  };
}

/** The Dockerfile's build stages here: the local Node with npm, and busybox for RUN steps' /bin/sh. */
function nodeBuild(): ImageSpec {
  const node = nodeBinary();
  const npmDir = resolve(dirname(node), "../lib/node_modules/npm");
  const layer = busybox(baseFiles(new Layer()))
    .host(node, "usr/bin/node")
    .sharedLibraries(node)
    .tree(npmDir, "usr/lib/node_modules/npm")
    .symlink("usr/bin/npm", "../lib/node_modules/npm/bin/npm-cli.js")
    .symlink("usr/bin/npx", "../lib/node_modules/npm/bin/npx-cli.js")
    .host(CA_BUNDLE);
  return {
    name: "localhost/healthprobe-build/node:20",
    layers: [layer.list()],
    // npm trusts the image's CA bundle as the local Node does, the registry's certificates may chain to a local CA.
    config: { Cmd: ["/bin/sh"], Env: [PATH_ENV, "HOME=/root", `NODE_EXTRA_CA_CERTS=${CA_BUNDLE}`], WorkingDir: "/" },
    gzip: true,
  };
}

/** Like distroless nodejs20 :nonroot: node at /nodejs/bin/node, its libraries, CA certificates, uid 65532, no shell. */
function nodeRuntime(): ImageSpec {
  const node = nodeBinary();
  const layer = baseFiles(new Layer()).host(node, "nodejs/bin/node").sharedLibraries(node).host(CA_BUNDLE);
  return {
    name: "localhost/healthprobe-build/nodejs20-runtime:nonroot",
    layers: [layer.list()],
    config: {
      Entrypoint: ["/nodejs/bin/node"],
      User: "65532",
      Env: [PATH_ENV, `SSL_CERT_FILE=${CA_BUNDLE}`],
      WorkingDir: "/home/nonroot",
    },
    gzip: true,
  };
}

/** The chart's helm test image (values helmTest.image), made from Debian's busybox-static, with a wget that takes -T. */
function helmTestBusybox(): ImageSpec {
  const layer = busybox(baseFiles(new Layer()));
  if (!wgetHasTimeout())
    for (const applet of busyboxApplets())
      if (posix.basename(applet) === "wget") layer.file(applet, WGET_TIMEOUT_SHIM, 0o755);
  return {
    name: "docker.io/library/busybox:1.36",
    layers: [layer.list()],
    config: { Cmd: ["sh"], Env: [PATH_ENV] },
    gzip: true,
  };
}

export const IMAGES: Record<string, { describe: string; spec: () => ImageSpec }> = {
  pause: { describe: "the test node's pod sandbox", spec: pause },
  workload: { describe: "the test pods' HTTP/TCP/gRPC health server with a control endpoint", spec: workload },
  "node-build": { describe: "the Dockerfile's NODE_IMAGE here: local Node, npm, busybox", spec: nodeBuild },
  "node-runtime": {
    describe: "the Dockerfile's RUNTIME_IMAGE here: distroless-like Node, uid 65532",
    spec: nodeRuntime,
  },
  busybox: { describe: "the chart's helm test image", spec: helmTestBusybox },
};
