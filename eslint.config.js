// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/gen/**", "**/generated/**", "sdk/dist/**", ".data/**", "bench/results/**", ".scratch/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly", clearInterval: "readonly", URL: "readonly", AbortController: "readonly", TextEncoder: "readonly", TextDecoder: "readonly", fetch: "readonly", performance: "readonly", setImmediate: "readonly", queueMicrotask: "readonly", structuredClone: "readonly", AbortSignal: "readonly", Response: "readonly", Request: "readonly", Headers: "readonly" } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-control-regex": "off",
    },
  },
);
