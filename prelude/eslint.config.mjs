// Lint configuration for prelude.js (style.md §7): core ESLint rules only, no plugins, so
// `npx eslint@9 -c prelude/eslint.config.mjs prelude/prelude.js` needs nothing installed.
// The prelude is a classic script evaluated by boa_engine, not a Node module.
export default [
  {
    files: ["prelude.js", "prelude/prelude.js"],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: "script",
      globals: { globalThis: "readonly" },
    },
    rules: {
      "no-undef": "error",
      "no-unused-vars": ["error", { args: "after-used", argsIgnorePattern: "^_" }],
      "no-redeclare": "error",
      "no-shadow": ["error", { builtinGlobals: false }],
      "no-implicit-globals": "error",
      "prefer-const": "error",
      "no-var": "error",
      eqeqeq: ["error", "always"],
      "no-eval": "off",
      strict: ["error", "function"],
    },
  },
];
