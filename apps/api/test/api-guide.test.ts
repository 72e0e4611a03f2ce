import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { eventually, listen, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/**
 * docs/api-guide.md runs as written: every ```sh block, in order, with curl against a started
 * service (an API on a real port and a worker), SDX_URL, SDX_API_KEY, JOB_ID and BATCH_ID set
 * as the guide says. A block must exit 0 and its output must hold each `<!-- expect: … -->`
 * written above it (case-insensitive text, or /a regular expression/); a block without one
 * fails the test, so no example goes unchecked.
 */

const run = promisify(execFile);
const GUIDE = path.resolve(__dirname, '../../../docs/api-guide.md');

interface Example {
  line: number;
  script: string;
  expects: string[];
}

/** The guide's sh blocks, each with the expect comments just above it. */
function examplesOf(markdown: string): Example[] {
  const lines = markdown.split('\n');
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue;
    const expects: string[] = [];
    for (let j = i - 1; j >= 0; j--) {
      const match = /^<!-- expect: (.*) -->$/.exec(lines[j]);
      if (!match) break;
      expects.unshift(match[1]);
    }
    const end = lines.indexOf('```', i + 1);
    examples.push({ line: i + 1, script: lines.slice(i + 1, end).join('\n'), expects });
    i = end;
  }
  return examples;
}

function holds(output: string, expected: string): boolean {
  const regex = /^\/(.*)\/$/.exec(expected);
  if (regex) return new RegExp(regex[1]).test(output);
  return output.toLowerCase().includes(expected.toLowerCase());
}

let stack: TestStack;
let ws: SeededWorkspace;
let server: Server;
let url: string;
let jobId: string;
let batchId: string;
let workdir: string;

beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
  ws = await stack.workspace({ credits: 20_000, rateLimitPerMinute: 100_000 });
  jobId = (
    await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 'nasa', limit: 2_500 },
    })
  ).body.id;
  batchId = (
    await stack.api.post('/v1/batches', {
      headers: ws.auth,
      body: { platform: 'instagram', operation: 'profile', targets: ['natgeo', 'nasa'] },
    })
  ).body.id;
  await eventually(async () => {
    const rows = await stack.runtime.db.selectFrom('jobs').select('status').where('workspace_id', '=', ws.workspaceId).execute();
    return rows.length === 3 && rows.every((r) => r.status === 'completed');
  }, 60_000);
  ({ server, url } = await listen(stack.app));
  workdir = mkdtempSync(path.join(tmpdir(), 'sdx-api-guide-'));
}, 90_000);
afterAll(async () => {
  if (workdir) rmSync(workdir, { recursive: true, force: true });
  if (server) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await stack?.close();
});

it('runs every example of docs/api-guide.md against the service, each answering as the guide says', async () => {
  const examples = examplesOf(readFileSync(GUIDE, 'utf8'));
  expect(examples.length).toBeGreaterThanOrEqual(20);
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: workdir,
    SDX_URL: url,
    SDX_API_KEY: ws.apiKey,
    JOB_ID: jobId,
    BATCH_ID: batchId,
  };
  const failures: string[] = [];
  for (const example of examples) {
    const where = `docs/api-guide.md:${example.line}`;
    if (example.expects.length === 0) {
      failures.push(`${where}: no <!-- expect: … --> above the block`);
      continue;
    }
    let output: string;
    try {
      ({ stdout: output } = await run('bash', ['-e', '-c', example.script], {
        cwd: workdir,
        env,
        timeout: 30_000,
        maxBuffer: 64 * 1024 * 1024,
      }));
    } catch (error) {
      failures.push(
        `${where}: exited with ${(error as { code?: number }).code}: ${String((error as { stderr?: string }).stderr ?? error).slice(0, 300)}`,
      );
      continue;
    }
    for (const expected of example.expects) {
      if (!holds(output, expected)) failures.push(`${where}: output lacks ${expected}\n${output.slice(0, 800)}`);
    }
  }
  expect(failures).toEqual([]);
}, 120_000);
