// `npm run apiserver -- --port <port> --kubeconfig <file> [--simulate-kubelet] [--pod-cidr <cidr>]`:
// serves the API test server until SIGTERM/SIGINT.
import { startApiServer, type ApiServerOptions } from "./index.js";

interface Flags {
  options: ApiServerOptions;
  kubeconfig?: string;
}

class FlagError extends Error {}

export function parseFlags(argv: string[]): Flags {
  // A long-running server (make demo) keeps a bounded request log.
  const options: ApiServerOptions = { requestLogLimit: 100_000 };
  let kubeconfig: string | undefined;
  const value = (flag: string, i: number): string => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith("--")) throw new FlagError(`flag needs an argument: ${flag}`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    const take = (): string => {
      if (inline !== undefined) return inline;
      const v = value(flag, i);
      i++;
      return v;
    };
    switch (flag) {
      case "--port": {
        const v = take();
        const port = Number(v);
        if (!Number.isInteger(port) || port < 0 || port > 65535)
          throw new FlagError(`invalid value "${v}" for flag --port: must be an integer in 0-65535`);
        options.port = port;
        break;
      }
      case "--host":
        options.host = take();
        break;
      case "--kubeconfig":
        kubeconfig = take();
        break;
      case "--simulate-kubelet":
        options.simulateKubelet = true;
        break;
      case "--pod-cidr": {
        const v = take();
        if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(v))
          throw new FlagError(`invalid value "${v}" for flag --pod-cidr: must be an IPv4 CIDR like 127.0.10.0/24`);
        options.podCidr = v;
        break;
      }
      case "--no-controllers":
        options.controllers = false;
        break;
      default:
        throw new FlagError(`unknown flag: ${flag}`);
    }
  }
  return { options, kubeconfig };
}

async function main(): Promise<void> {
  let flags: Flags;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(
      `${(err as Error).message}\nusage: apiserver --port <port> --kubeconfig <file> [--simulate-kubelet] [--pod-cidr <cidr>] [--host <ip>] [--no-controllers]\n`,
    );
    process.exit(2);
  }
  const server = await startApiServer(flags.options);
  if (flags.kubeconfig) server.writeKubeconfig(flags.kubeconfig);
  process.stdout.write(`serving ${server.url}${flags.kubeconfig ? `, kubeconfig ${flags.kubeconfig}` : ""}\n`);
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    server.stop().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`stopping the API server: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

await main();
