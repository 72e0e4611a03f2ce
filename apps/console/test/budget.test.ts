import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CONSOLE_DIST, INITIAL_JS_BUDGET_BYTES, ensureConsoleBuild } from '../tools/console-build';

/**
 * The console's first page load stays light: the JavaScript index.html loads before any lazily
 * loaded page (the entry and the chunks it imports statically), gzipped, is under 250 KiB. The
 * build is the one the suite's global setup made (rebuilt here only if a source changed since).
 */
it('loads less than 250 KiB of gzipped JavaScript before the first page', async () => {
  const build = await ensureConsoleBuild();
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  console.log(`console initial JavaScript: ${kib(build.initialJsGzipBytes)} gzipped (budget ${kib(INITIAL_JS_BUDGET_BYTES)})`);

  // The figure measures what index.html loads: its module script and its preloads, all counted.
  const initial = JSON.parse(readFileSync(path.join(CONSOLE_DIST, 'initial.json'), 'utf8')) as { entry: string; imports: string[] };
  const html = readFileSync(path.join(CONSOLE_DIST, 'index.html'), 'utf8');
  // The tags are in the inline boot script's string (tools/boot.ts), their quotes escaped.
  const loaded = [...html.matchAll(/(?:src|href)=\\?"\/console\/assets\/([^"\\]+\.js)\\?"/g)].map((m) => m[1]);
  expect(loaded.sort()).toEqual([initial.entry, ...initial.imports].sort());
  // React and the router alone weigh more than this: a measure that counted nothing cannot pass.
  expect(build.initialJsGzipBytes).toBeGreaterThan(40 * 1024);

  expect(INITIAL_JS_BUDGET_BYTES).toBe(250 * 1024);
  expect(build.initialJsGzipBytes).toBeLessThan(INITIAL_JS_BUDGET_BYTES);
});
