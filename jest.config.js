// ESM TypeScript through swc: fast, no type checking (that is `make typecheck`).
import { availableParallelism } from "node:os";

export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  transform: {
    "^.+\\.ts$": [
      "@swc/jest",
      { jsc: { parser: { syntax: "typescript" }, target: "es2022" }, module: { type: "es6" } },
    ],
  },
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  testMatch: [
    "<rootDir>/operator/**/*.test.ts",
    "<rootDir>/test/**/*.test.ts",
    "<rootDir>/hack/apiserver/**/*.test.ts",
  ],
  testPathIgnorePatterns: ["/node_modules/", "/dist/", "<rootDir>/test/e2e/"],
  testTimeout: 60000,
  // Most suites wait on real servers, timers and child processes rather than the CPU: with two
  // workers on two cores the machine was 44% busy, with three 57% and the run 28% shorter, so
  // three at least (jest's default there is one). Each suite gets its own API test server and pod
  // addresses, so suites do not meet. A worker that grew past 1 GB is replaced.
  maxWorkers: Math.max(3, availableParallelism() - 1),
  workerIdleMemoryLimit: "1GB",
};
