import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", ".tools/", ".scratch/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        setImmediate: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        AbortController: "readonly",
        AbortSignal: "readonly",
        TextEncoder: "readonly",
        TextDecoder: "readonly",
        structuredClone: "readonly",
        queueMicrotask: "readonly",
      },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      "@typescript-eslint/no-explicit-any": "off",
    },
  },
  {
    // Only adapters talk to the API or the network.
    files: ["operator/src/**/*.ts"],
    ignores: ["operator/src/adapters/**", "operator/src/**/*.test.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: ["@kubernetes/*", "undici"] }],
    },
  },
  {
    // The decision core is pure: no client, no HTTP, no logger, no wall clock.
    files: ["operator/src/domain/**/*.ts"],
    ignores: ["operator/src/domain/**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            "@kubernetes/*",
            "undici",
            "pino",
            "prom-client",
            "node:*",
            "../adapters/*",
            "../runtime/*",
            "../controllers/*",
          ],
        },
      ],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "The domain takes `now` as a parameter." },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: "The domain takes `now` as a parameter.",
        },
      ],
    },
  },
);
