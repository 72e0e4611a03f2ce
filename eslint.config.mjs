// `npm run lint` (CI runs it after the typecheck): typescript-eslint with type information, and the
// rules of hooks for the console. Each TypeScript file is checked against the tsconfig that covers
// it (projectService finds the nearest): tsconfig.json for the Node code, apps/console/tsconfig.json
// for the console's browser code. The recommended sets of ESLint and typescript-eslint (not the
// type-checked or strict ones), plus the rules below, which are all errors; warnings fail the
// script too (--max-warnings 0).
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

// The domain's declared entry points (packages/domain/package.json "exports", docs/architecture.md
// "Layers"): code outside packages/domain imports one of them, never the package's root or a
// module of its src/. Each app imports its own entry; tests, benches and scripts may import any.
const DOMAIN_ENTRIES = ['api', 'worker', 'scheduler', 'runtime', 'testing'];
function domainImports(allowed = DOMAIN_ENTRIES) {
  const others = DOMAIN_ENTRIES.filter((entry) => !allowed.includes(entry));
  return [
    'error',
    {
      paths: [{ name: '@sdx/domain', message: `Import a declared entry of the domain: @sdx/domain/${allowed.join(', /')}.` }],
      patterns: [
        {
          regex: `^@sdx/domain/(?!(${DOMAIN_ENTRIES.join('|')})$)`,
          message: 'A module of the domain is reached through a declared entry (packages/domain/src/entry/), not by its path.',
        },
        ...(others.length ? [{ regex: `^@sdx/domain/(${others.join('|')})$`, message: `This code imports @sdx/domain/${allowed.join(', /')} only.` }] : []),
        {
          regex: '^\\.{1,2}/(.*/)?(packages/)?domain(/|$)',
          message: 'No relative import into packages/domain from outside it: import a declared entry (@sdx/domain/...).',
        },
      ],
    },
  ];
}

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
    files: ['**/*.{ts,tsx}'],
    ignores: ['packages/domain/src/**'],
    rules: { 'no-restricted-imports': domainImports() },
  },
  { files: ['apps/api/src/**/*.ts'], rules: { 'no-restricted-imports': domainImports(['api']) } },
  { files: ['apps/worker/src/**/*.ts'], rules: { 'no-restricted-imports': domainImports(['worker']) } },
  { files: ['apps/scheduler/src/**/*.ts', 'packages/scheduler-engine/src/**/*.ts'], rules: { 'no-restricted-imports': domainImports(['scheduler']) } },
  { files: ['packages/runtime/src/**/*.ts'], rules: { 'no-restricted-imports': domainImports(['runtime']) } },
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
