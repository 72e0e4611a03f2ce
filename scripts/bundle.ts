import type { BuildOptions, Plugin } from 'esbuild';

/** node_modules imports stay imports; @sdx/* and relative ones are compiled in. */
const externalPackages: Plugin = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@sdx/')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/**
 * How a process of the service is compiled into one file that plain `node` runs: the
 * workspace's packages (@sdx/*) compiled in, every other package an import of node_modules.
 * `npm run build` (scripts/build.ts) writes dist/ with it; the tests' built processes
 * (packages/testing/src/built-process.ts) use the same options.
 */
export const PROCESS_BUNDLE: BuildOptions & { metafile: true } = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  metafile: true,
  logLevel: 'warning',
  plugins: [externalPackages],
};
