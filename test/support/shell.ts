// Runs a README command line through sh, as a reader pastes it, without blocking this process
// (which may be serving what the command talks to).
import { spawn } from "node:child_process";
import { repoRoot } from "./paths.js";

export interface ShellResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function sh(command: string): Promise<ShellResult> {
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", command], {
      cwd: repoRoot,
      env: { ...process.env, npm_config_update_notifier: "false" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}
