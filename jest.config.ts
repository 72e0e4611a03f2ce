/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const config: Config = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
    // otplib's @scure/base and @noble/hashes ship as ES modules only; Jest's loader requires, so they are compiled.
    '^.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'ecmascript' } }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(@scure/base|@noble/hashes|@otplib/plugin-crypto-noble/node_modules/@noble/hashes)/)'],
  testMatch: ['<rootDir>/apps/*/test/**/*.test.ts', '<rootDir>/packages/*/test/**/*.test.ts', '<rootDir>/clients/*/test/**/*.test.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  // The SDK's package entry points at its build (dist/); the workspace tests its source, as tsconfig's paths do.
  moduleNameMapper: { '^@sdx/sdk$': '<rootDir>/packages/sdk/src/index.ts' },
  globalSetup: '<rootDir>/packages/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/packages/testing/src/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};

export default config;
