/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

const config: Config = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  testMatch: ['<rootDir>/apps/*/test/**/*.test.ts', '<rootDir>/packages/*/test/**/*.test.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  // The SDK's package entry points at its build (dist/); the workspace tests its source, as tsconfig's paths do.
  moduleNameMapper: { '^@sdx/sdk$': '<rootDir>/packages/sdk/src/index.ts' },
  globalSetup: '<rootDir>/packages/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/packages/testing/src/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};

export default config;
