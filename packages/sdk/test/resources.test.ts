import { ApiError, Client, type ScheduleRequest } from '@sdx/sdk';
import { type SeededWorkspace, type ServedStack, startServedStack, type TestStack } from '@sdx/testing';
import { clientFor, contractFetch } from './support';

/** Catalog, account, usage, quotes, schedules, keys, audit events and session users through the SDK. */

let stack: TestStack;
let served: ServedStack;
beforeAll(async () => {
  served = await startServedStack({ withWorker: true });
  stack = served.stack;
});
afterAll(async () => {
  await served.close();
});

let ws: SeededWorkspace;
let sdx: Client;
beforeEach(async () => {
  ws = await stack.workspace({ credits: 5_000 });
  sdx = clientFor(served.url, ws);
});

it('reads the catalog without a key, and the account and usage with one', async () => {
  const anonymous = clientFor(served.url, null);
  const platforms = await anonymous.platforms.list();
  expect(platforms.data.map((p) => p.platform).sort()).toEqual(['facebook', 'instagram', 'tiktok', 'twitter', 'youtube']);
  expect(platforms.hasMore).toBe(false);
  let operations = 0;
  for await (const platform of anonymous.platforms.list()) operations += platform.operations.length;
  expect(operations).toBe(55);

  expect(await sdx.account.get()).toMatchObject({ organization_id: ws.workspaceId, authenticated_key_id: ws.keyId, auth_type: 'api_key' });
  expect(await sdx.usage.current()).toMatchObject({ credit_limit: 5_000, credits_remaining: 5_000 });
  const daily = await sdx.usage.daily({ days: 3 });
  expect(daily).toHaveLength(3);
  expect(daily[2]).toMatchObject({ credits_used: 0, jobs_completed: 0 });
});

it('quotes a job and a batch without reserving anything', async () => {
  const job = await sdx.quotes.create({ platform: 'twitter', operation: 'followers', target: 'nasa', limit: 1000 });
  expect(job).toMatchObject({ target_count: 1, max_credits: 2000, affordable: true });
  const batch = await sdx.quotes.create({ platform: 'twitter', operation: 'followers', targets: ['nasa', 'esa'], limit: 2000 });
  expect(batch).toMatchObject({ target_count: 2, max_credits: 8000, affordable: false });
  expect((await sdx.usage.current()).credits_reserved).toBe(0);
});

it('manages a schedule: create, list, get, update, pause, resume, run, preview, delete', async () => {
  const recipe = {
    name: 'Nightly posts',
    platform: 'instagram',
    operation: 'posts',
    targets: ['natgeo'],
    limit: 5,
    frequency: 'daily',
    timezone: 'Europe/Paris',
    starts_at: '2030-03-30T02:30:00+01:00',
  } satisfies ScheduleRequest;
  const created = await sdx.schedules.create(recipe);
  expect(created).toMatchObject({ name: 'Nightly posts', status: 'active', requested_limit: 5 });
  expect((await sdx.schedules.list()).data.map((s) => s.id)).toEqual([created.id]);
  expect((await sdx.schedules.get(created.id)).id).toBe(created.id);
  expect(await sdx.schedules.update(created.id, { ...recipe, name: 'Renamed', limit: 7 })).toMatchObject({
    name: 'Renamed',
    requested_limit: 7,
  });
  expect((await sdx.schedules.pause(created.id)).status).toBe('paused');
  expect((await sdx.schedules.resume(created.id)).status).toBe('active');
  const ran = await sdx.schedules.run(created.id);
  expect(ran.runs[0]).toMatchObject({ trigger: 'manual', status: 'queued', job_id: expect.stringMatching(/^job_/) });

  const preview = await sdx.schedules.preview({
    frequency: 'daily',
    timezone: 'Europe/Paris',
    starts_at: '2030-03-30T02:30:00+01:00',
    count: 2,
  });
  expect(preview.runs.map((r) => r.at_utc)).toEqual(['2030-03-30T01:30:00.000Z', '2030-03-31T01:30:00.000Z']);

  await sdx.schedules.delete(created.id);
  await expect(sdx.schedules.get(created.id)).rejects.toMatchObject({ status: 404, code: 'schedule_not_found' });
});

it('creates, lists and revokes keys; a revoked key is refused', async () => {
  const key = await sdx.keys.create({ name: 'CI', role: 'viewer' });
  expect(key).toMatchObject({ name: 'CI', role: 'viewer', prefix: key.api_key.slice(0, 12) });
  const viewer = clientFor(served.url, { apiKey: key.api_key });
  expect((await viewer.account.get()).role).toBe('viewer');
  await expect(viewer.keys.create({ name: 'escalate' })).rejects.toMatchObject({ status: 403, code: 'forbidden' });

  const listed = await sdx.keys.list();
  expect(listed.data.map((k) => k.id)).toContain(key.id);
  await sdx.keys.revoke(key.id);
  const refused = await viewer.account.get().catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ApiError);
  expect(refused).toMatchObject({ status: 401, code: 'invalid_api_key' });
});

it('iterates audit events across pages (starting_after), newest first', async () => {
  const owner = new Client({ baseUrl: served.url, apiKey: ws.apiKey, fetch: contractFetch() });
  const made: string[] = [];
  for (let i = 0; i < 5; i++) made.push((await owner.keys.create({ name: `key ${i}` })).id);
  const seen: string[] = [];
  for await (const event of owner.auditEvents.list({ limit: 2 })) if (event.action === 'api_key.created') seen.push(event.target_id!);
  // newest first: the five keys, then the key the workspace was seeded with
  expect(seen).toEqual([...made].reverse().concat(ws.keyId));
  const first = await owner.auditEvents.list({ limit: 2 });
  expect(first.data).toHaveLength(2);
  expect(first.hasMore).toBe(true);
  const second = await first.next();
  expect(second!.data.map((e) => e.id)).not.toContain(first.data[0].id);
});

it('signs up, works in a team workspace with a session, invites, and signs out', async () => {
  const ada = new Client({ baseUrl: served.url, fetch: contractFetch() });
  const signedUp = await ada.auth.signUp({ email: 'ada.sdk@example.com', password: 'correct horse battery' });
  // This stack mails nothing (no SMTP_URL), so sign-up signs in at once.
  if (!('csrf_token' in signedUp)) throw new Error('sign-up asked for email verification');
  expect(signedUp.user.email).toBe('ada.sdk@example.com');
  expect((await ada.auth.session()).user.id).toBe(signedUp.user.id);

  const team = await ada.workspaces.create({ name: 'Analytics' });
  expect(team).toMatchObject({ kind: 'team', role: 'owner', require_two_factor: false });
  expect((await ada.workspaces.update(team.id, { name: 'Analytics team' })).name).toBe('Analytics team');
  expect((await ada.workspaces.list()).data.map((w) => w.id)).toContain(team.id);

  const grace = new Client({ baseUrl: served.url, fetch: contractFetch() });
  const graceUser = await grace.auth.signUp({ email: 'grace.sdk@example.com', password: 'another long password' });
  if (!('csrf_token' in graceUser)) throw new Error('sign-up asked for email verification');
  const invitation = await ada.workspaces.invitations.create(team.id, { email: 'grace.sdk@example.com', role: 'member' });
  expect((await ada.workspaces.invitations.list(team.id)).data.map((i) => i.id)).toEqual([invitation.id]);
  expect((await grace.workspaces.acceptInvitation(invitation.token)).id).toBe(team.id);
  expect((await ada.workspaces.members.list(team.id)).data.map((m) => m.email).sort()).toEqual([
    'ada.sdk@example.com',
    'grace.sdk@example.com',
  ]);
  expect((await ada.workspaces.members.update(team.id, graceUser.user.id, { role: 'admin' })).role).toBe('admin');
  await ada.workspaces.members.remove(team.id, graceUser.user.id);

  const spare = await ada.workspaces.invitations.create(team.id, { email: 'someone@example.com', role: 'viewer' });
  await ada.workspaces.invitations.revoke(team.id, spare.id);
  expect((await ada.workspaces.invitations.list(team.id)).data).toEqual([]);

  const inTeam = new Client({ baseUrl: served.url, fetch: contractFetch(), workspaceId: team.id });
  await inTeam.auth.logIn({ email: 'ada.sdk@example.com', password: 'correct horse battery' });
  expect((await inTeam.account.get()).organization_id).toBe(team.id);
  await inTeam.auth.changePassword({ current_password: 'correct horse battery', new_password: 'a brand new password' });
  await inTeam.auth.logOut();
  await expect(inTeam.auth.session()).rejects.toMatchObject({ status: 401, code: 'missing_authentication' });
});
