// The pod server process: `node --import tsx pod-server-main.ts <pod CIDR> [marker]` (the marker
// only names its run on the command line). Prints its port as
// one JSON line, then reads JSON lines from stdin, each the full list of failing addresses, and
// answers each with {"ok":true} once applied. It runs apart from the benchmark (and the API test
// server in it) so probe latency does not depend on how busy they are.
import { createInterface } from "node:readline";
import { cidrContains, startPodServer } from "./pod-server.js";

const cidr = process.argv[2];
if (!cidr) throw new Error("usage: pod-server-main.ts <pod CIDR> [marker]");
const server = await startPodServer(cidrContains(cidr));
process.stdout.write(JSON.stringify({ port: server.port }) + "\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line === "served") {
    process.stdout.write(JSON.stringify(server.served) + "\n");
    return;
  }
  server.setFailing(JSON.parse(line) as string[]);
  process.stdout.write(JSON.stringify({ ok: true }) + "\n");
});
process.stdin.on("end", () => void server.close().then(() => process.exit(0)));
