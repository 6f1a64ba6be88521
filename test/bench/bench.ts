// A named benchmark: `npm run bench -- <name> [flags]`; `all` runs every registered one with its defaults.
export interface Benchmark {
  name: string;
  description: string;
  usage: string;
  /** Resolves to an exit code (0 when omitted). */
  run(args: string[]): Promise<number | void>;
}
