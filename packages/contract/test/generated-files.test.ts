import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { WEBHOOK_EVENT_TYPES, loadOpenApiDocument } from '../src';

/**
 * Every file generated from openapi.yaml is what `npm run generate:types` makes of the current
 * openapi.yaml: each command of that script is run here as written, its output (`-o`) sent to a
 * temporary folder, and compared with the committed file. The files: the contract's types
 * (src/openapi.d.ts), the SDK's (packages/sdk/src/openapi.ts, `--default-non-nullable false` so
 * request fields with defaults stay optional) and the enums' values (src/events.ts).
 */
const ROOT = path.resolve(__dirname, '../../..');
const run = promisify(execFile);

const GENERATED = ['packages/contract/src/events.ts', 'packages/contract/src/openapi.d.ts', 'packages/sdk/src/openapi.ts'];

interface Command {
  bin: string;
  args: string[];
  output: string;
}

function commands(): Command[] {
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  return manifest.scripts['generate:types'].split('&&').map((command) => {
    const [bin, ...args] = command.trim().split(/\s+/);
    const at = args.indexOf('-o');
    if (!bin || at < 0 || !args[at + 1]) throw new Error(`generate:types: "${command.trim()}" names no output (-o)`);
    return { bin, args, output: args[at + 1] };
  });
}

it('npm run generate:types writes each generated file, and nothing else', () => {
  expect(
    commands()
      .map((c) => c.output)
      .sort(),
  ).toEqual(GENERATED);
});

it('the generated files are those of the current openapi.yaml (else: npm run generate:types)', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sdx-generated-'));
  try {
    const stale: string[] = [];
    for (const { bin, args, output } of commands()) {
      const fresh = path.join(dir, path.basename(output));
      await run(
        path.join(ROOT, 'node_modules', '.bin', bin),
        args.map((arg) => (arg === output ? fresh : arg)),
        { cwd: ROOT },
      );
      if (readFileSync(fresh, 'utf8') !== readFileSync(path.join(ROOT, output), 'utf8')) stale.push(output);
    }
    expect(stale).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

it('lists every webhook event type of openapi.yaml, and every selector is one of them or *', () => {
  const schemas = loadOpenApiDocument().components!.schemas! as Record<string, { enum?: string[] }>;
  expect([...WEBHOOK_EVENT_TYPES]).toEqual(schemas.WebhookEventType.enum);
  expect(schemas.WebhookEventSelector.enum).toEqual(['*', ...WEBHOOK_EVENT_TYPES]);
});
