import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { OPENAPI_PATH } from '../src';

/**
 * A client generated from openapi.yaml as a new user would make one (the openapi-typescript CLI
 * with its default options, then openapi-fetch) type-checks the README's calls as the README writes them:
 * bodies leave out what has a default, error identifiers are an enum with typed context, items
 * are told apart by `kind`. The `@ts-expect-error` lines prove the types still refuse what the
 * API refuses, so the check cannot pass by typing everything loosely.
 */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';

const client = createClient<paths>({ baseUrl: 'http://localhost:3000', headers: { 'X-API-Key': 'sdx_live_...' } });

export async function readme(): Promise<void> {
  await client.GET('/v1/platforms');
  await client.GET('/v1/account');
  const usage = await client.GET('/v1/usage/current');
  const remaining: number | undefined = usage.data?.units_remaining;

  const extracted = await client.POST('/v1/extract', { body: { platform: 'instagram', operation: 'profile', target: 'natgeo' } });
  const result = extracted.data?.result;
  if (Array.isArray(result)) {
    for (const item of result) {
      if (item.kind === 'profile') {
        const followers: number | null = item.followers_count;
      } else if (item.kind === 'post' || item.kind === 'video') {
        const likes: number | null = item.metrics.likes;
      }
    }
  }

  const job = await client.POST('/v1/jobs', { body: { platform: 'twitter', operation: 'followers', target: 'nasa', limit: 25000 } });
  await client.POST('/v1/jobs', { body: { platform: 'instagram', operation: 'profile', target: 'natgeo' } });
  if (job.data) {
    const jobId: string = job.data.id;
    const reserved: number = job.data.reserved_credits;
    await client.GET('/v1/jobs/{job_id}', { params: { path: { job_id: jobId } } });
    await client.GET('/v1/jobs/{job_id}/export', { params: { path: { job_id: jobId }, query: { format: 'csv' } }, parseAs: 'text' });
    const exported = await client.GET('/v1/jobs/{job_id}/export', { params: { path: { job_id: jobId } } });
    // json is the result itself; csv and xlsx come as text or bytes.
    const rows: components['schemas']['JobResult'] | string | undefined = exported.data;
    if (rows !== undefined && typeof rows !== 'string') {
      const first: components['schemas']['Item'] | undefined = Array.isArray(rows) ? rows[0] : rows.profile;
    }
  }
  if (job.error && !Array.isArray(job.error.detail)) {
    const detail = job.error.detail;
    if (detail.error === 'insufficient_credits') {
      const missing: number = detail.required - detail.available;
    }
    if (detail.error === 'concurrent_job_limit_exceeded') {
      const active: number = detail.active;
    }
    // @ts-expect-error an identifier the contract does not have
    if (detail.error === 'no_such_error') return;
  }

  await client.POST('/v1/batches', { body: { operation: 'profile', targets: ['natgeo', 'nasa'] } });
  await client.POST('/v1/quotes', { body: { operation: 'followers', target: 'nasa' } });
  await client.POST('/v1/schedules', {
    body: { name: 'Daily natgeo', operation: 'posts', targets: ['natgeo'], frequency: 'daily', timezone: 'Europe/Paris', starts_at: '2026-12-01T09:00:00+01:00' },
  });
  await client.PUT('/v1/schedules/{schedule_id}', {
    params: { path: { schedule_id: 'sch_1' } },
    body: { name: 'Weekly natgeo', operation: 'posts', targets: ['natgeo'], frequency: 'weekly', timezone: 'UTC', starts_at: '2026-12-01T09:00:00Z' },
  });
  await client.POST('/v1/schedules/preview', { body: { frequency: 'daily', timezone: 'UTC', starts_at: '2026-12-01T09:00:00Z' } });

  await client.POST('/v1/auth/signup', { body: { email: 'ada@example.com', password: 'at least 10 chars' } });
  await client.POST('/v1/workspaces', { body: { name: 'Team' } });
  await client.POST('/v1/workspaces/{workspace_id}/invitations', {
    params: { path: { workspace_id: 'ws_1' } },
    body: { email: 'grace@example.com', role: 'member' },
  });
  await client.GET('/v1/account', { params: { header: { 'X-Workspace-ID': 'ws_1' } } });
  await client.POST('/v1/keys', { body: { name: 'CI' } });
}

export async function refused(): Promise<void> {
  // @ts-expect-error target is required
  await client.POST('/v1/jobs', { body: { operation: 'profile' } });
  // @ts-expect-error operation is one of the catalog's names
  await client.POST('/v1/jobs', { body: { operation: 'everything', target: 'nasa' } });
  // @ts-expect-error unknown keys are refused
  await client.POST('/v1/batches', { body: { operation: 'profile', targets: ['nasa'], priority: 1 } });
}
`;

const NODE_MODULES = path.resolve(__dirname, '../../../node_modules');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'sdx-client-'));
  // The generated client resolves openapi-fetch (and TypeScript's libraries) from the repository.
  symlinkSync(NODE_MODULES, path.join(dir, 'node_modules'), 'dir');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

it('type-checks the README calls against a client generated from openapi.yaml', () => {
  const cli = path.join(NODE_MODULES, 'openapi-typescript', 'bin', 'cli.js');
  execFileSync(process.execPath, [cli, OPENAPI_PATH, '--output', path.join(dir, 'schema.ts')], { stdio: 'pipe' });
  writeFileSync(path.join(dir, 'client.ts'), CLIENT);
  const program = ts.createProgram([path.join(dir, 'client.ts')], {
    strict: true,
    noEmit: true,
    noUnusedLocals: false,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
    skipLibCheck: true,
  });
  const problems = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
  expect(problems).toEqual([]);
});
