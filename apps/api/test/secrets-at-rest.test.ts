import { execFile } from 'node:child_process';
import type { LookupAddress } from 'node:dns';
import { promisify } from 'node:util';
import { sealerOf } from '@sdx/domain/testing';
import { startTestStack, type TestStack } from '@sdx/testing';

/**
 * Secrets at rest (extensions-2.md 2): no column holds a webhook secret in clear. Webhooks are
 * created and a secret rotated through HTTP, then the whole test database is dumped with
 * pg_dump: the dump holds no `whsec_` anywhere, nor the base64 of any secret the API showed,
 * while the stored values open to exactly what was shown.
 */
const run = promisify(execFile);
const resolver = (): Promise<LookupAddress[]> => Promise.resolve([{ address: '93.184.216.34', family: 4 }]);

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ webhookResolver: resolver });
});
afterAll(async () => {
  await stack.close();
});

it('leaves no webhook secret in clear in a pg_dump of the database', async () => {
  const ws = await stack.workspace();
  const shown: string[] = [];
  const ids: string[] = [];
  for (const url of ['https://hooks.example.com/a', 'https://hooks.example.com/b']) {
    const res = await stack.api.post('/v1/webhooks', { headers: ws.auth, body: { url, events: ['*'] } });
    expect(res.status).toBe(201);
    shown.push(res.body.secret);
    ids.push(res.body.id);
  }
  const rotated = await stack.api.post(`/v1/webhooks/${ids[0]}/rotate-secret`, { headers: ws.auth });
  expect(rotated.status).toBe(200);
  shown.push(rotated.body.secret);
  expect(shown.every((s) => s.startsWith('whsec_'))).toBe(true);

  // Stored sealed, and opening to what the API showed (the rotated-away one kept as previous).
  const sealer = sealerOf(stack.config);
  const rows = await stack.runtime.db
    .selectFrom('webhooks')
    .select(['id', 'secret', 'previous_secret'])
    .where('workspace_id', '=', ws.workspaceId)
    .orderBy('id')
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  expect(sealer.open(byId.get(ids[0])!.secret)).toBe(shown[2]);
  expect(sealer.open(byId.get(ids[0])!.previous_secret!)).toBe(shown[0]);
  expect(sealer.open(byId.get(ids[1])!.secret)).toBe(shown[1]);

  const { stdout } = await run('pg_dump', ['--no-owner', '--data-only', stack.databaseUrl], { maxBuffer: 256 * 1024 * 1024 });
  // The dump is of this database, with these webhooks in it.
  expect(stdout).toContain(ids[0]);
  expect(stdout).toContain('sealed:v1:');
  expect(stdout).not.toContain('whsec_');
  for (const secret of shown) expect(stdout).not.toContain(secret.slice('whsec_'.length));
});
