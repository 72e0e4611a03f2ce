// `npm run lint` (CI runs it after the typecheck): typescript-eslint with type information, and the
// rules of hooks for the console. Each TypeScript file is checked against the tsconfig that covers
// it (projectService finds the nearest): tsconfig.json for the Node code, apps/console/tsconfig.json
// for the console's browser code. The recommended sets of ESLint and typescript-eslint (not the
// type-checked or strict ones), plus the rules below, which are all errors; warnings fail the
// script too (--max-warnings 0).
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/',
      '**/dist/',
      '**/coverage/',
      'artifacts/',
      'tmp/',
      // Generated from openapi.yaml by `npm run generate:types`.
      'packages/contract/src/openapi.d.ts',
      'packages/contract/src/events.ts',
      'packages/sdk/src/openapi.ts',
    ],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          caughtErrors: 'none',
          ignoreRestSiblings: true,
        },
      ],
      // Off: tests send deliberately ill-typed bodies and read untyped answers through `any`, and
      // a few adapters of untyped libraries (the pg driver, fast-check arbitraries) need it.
      // `unknown` with a cast is the better habit, but rewriting them is not this linter's job.
      '@typescript-eslint/no-explicit-any': 'off',
      // Off: the code matches control characters on purpose (NUL and C0 characters in input
      // checks, ANSI escapes in CLI tests); the rule is for ones typed by mistake.
      'no-control-regex': 'off',
      // pino-pretty is an optional development dependency, loaded lazily in a try (packages/config).
      '@typescript-eslint/no-require-imports': ['error', { allow: ['^pino-pretty$'] }],
    },
  },
  {
    // One way to read a request body in the API: the `body` a route's handler is given by
    // `route()` (apps/api/src/routes/route.ts), typed from openapi.yaml. A cast of `req.body` to a
    // hand-written type would be a second description of the contract that can drift from it.
    files: ['apps/api/src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "TSAsExpression[expression.type='MemberExpression'][expression.property.name='body']",
          message: "Take the body from the route's handler (route() in apps/api/src/routes/route.ts), typed from openapi.yaml, instead of casting req.body.",
        },
        {
          selector: "TSTypeAssertion[expression.type='MemberExpression'][expression.property.name='body']",
          message: "Take the body from the route's handler (route() in apps/api/src/routes/route.ts), typed from openapi.yaml, instead of casting req.body.",
        },
      ],
    },
  },
  {
    files: ['apps/console/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      // The two classic rules. The plugin's v7 "recommended" set also turns on the React
      // Compiler's checks, which the console (not built with the compiler) does not need.
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    // The few build and bin scripts written in JavaScript: ESLint's recommended set, no types.
    files: ['**/*.{js,mjs,cjs}'],
    extends: [js.configs.recommended],
    languageOptions: {
      ecmaVersion: 'latest',
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly' },
    },
  },
  {
    files: ['**/*.{js,cjs}'],
    languageOptions: { sourceType: 'commonjs', globals: { __dirname: 'readonly', __filename: 'readonly' } },
  },
);
