// Lint configuration for prelude.js (style.md §7): core ESLint rules only, no plugins, so
// `cd prelude && npx eslint@9 -c eslint.config.mjs prelude.js` needs only ESLint itself.
// The prelude is a classic script evaluated by boa_engine, not a Node module.
export default [
  {
    files: ["prelude.js"],
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
