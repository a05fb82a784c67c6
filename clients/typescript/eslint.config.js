// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "build/", "node_modules/"] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  ...tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      // Express tells error handlers by their four parameters.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    // The core runs in browsers, Deno and edge runtimes: web platform APIs only.
    files: ["src/**/*.ts"],
    ignores: ["src/mqtt.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: ["node:*", "fs", "path", "crypto", "http", "https", "stream", "buffer", "events"] }],
      "no-restricted-globals": ["error", "process", "Buffer", "require", "__dirname", "__filename", "setImmediate"],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
);
