import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import Papa from 'papaparse';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createSandboxProvider } from '@sdx/providers';
import { eventually, grantWorkspaceCredits, listen, signUpUser, startTestStack, type SessionUser, type TestStack } from '@sdx/testing';
import {
  closeContexts,
  heading,
  launchBrowser,
  newPageIn,
  SCREENSHOTS,
  screenshots,
  seriousA11yViolations,
  TAKE_SCREENSHOTS,
  visibleButtons,
} from './browser';

/**
 * The web console in a real browser (Debian's chromium through playwright-core) against the
 * real service: the API serving /console and the /v1 API, a worker, Postgres and Redis. The
 * sandbox serves pages of 10 items so a job's progress moves visibly.
 */
let stack: TestStack;
let server: Server;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  stack = await startTestStack({
    withWorker: true,
    providers: [createSandboxProvider({ pageSize: 10, followPageSize: 10 })],
    // The team workspaces of these tests run work; a new team workspace has no credits by default.
    env: { NEW_TEAM_WORKSPACE_CREDITS: '1000' },
  });
  ({ url: base, server } = await listen(stack.app));
  browser = await launchBrowser();
}, 60_000);

// Each test opens its own pages: closed after it, they stop polling the service meanwhile.
afterEach(() => closeContexts(contexts));

afterAll(async () => {
  await closeContexts(contexts);
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
});

/** Where each page's screenshots are kept for the docs (docs/console/pages.md). */
const DOC_SHOTS = path.resolve(__dirname, '..', '..', '..', 'docs', 'console', 'pages');

/** A page's screenshots (desktop and phone), under artifacts/screenshots and, for the docs, docs/console/pages (SCREENSHOTS=1). */
async function pageScreenshots(page: Page, name: string): Promise<void> {
  await screenshots(page, name);
  if (!TAKE_SCREENSHOTS) return;
  mkdirSync(DOC_SHOTS, { recursive: true });
  for (const size of ['desktop', 'phone'])
    copyFileSync(path.join(SCREENSHOTS, `${name}-${size}.png`), path.join(DOC_SHOTS, `${name}-${size}.png`));
}

let seq = 0;
const newEmail = (who: string) => `${who}${++seq}.${Date.now().toString(36)}@example.com`;
const PASSWORD = 'correct horse battery';

const newPage = () => newPageIn(browser, contexts, { acceptDownloads: true });

async function signUpInBrowser(page: Page, email = newEmail('ada')): Promise<string> {
  await page.goto(`${base}/console/signup`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await heading(page, 'Overview');
  return email;
}

async function signInInBrowser(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await heading(page, 'Overview');
}

async function chooseWorkspace(page: Page, workspaceId: string): Promise<void> {
  await page.getByLabel('Workspace').selectOption(workspaceId);
  await heading(page, 'Overview');
}

/** A signed-in user's headers for the API, from the browser's session cookie. */
async function browserSession(page: Page): Promise<Record<string, string>> {
  const cookie = (await page.context().cookies()).find((c) => c.name === 'sdx_session');
  if (!cookie) throw new Error('the browser has no session cookie');
  const session = await stack.api.get('/v1/auth/session', { headers: { Cookie: `sdx_session=${cookie.value}` } });
  return { Cookie: `sdx_session=${cookie.value}`, 'X-CSRF-Token': session.body.csrf_token };
}

describe('console: a new user', () => {
  it('signs up, creates an API key and sees its secret once, with a copy button and a warning', async () => {
    const page = await newPage();
    await signUpInBrowser(page);
    await page.getByRole('link', { name: 'API keys' }).click();
    await heading(page, 'API keys');
    await page.getByLabel('Name').fill('nightly export');
    await page.getByRole('button', { name: 'Create key' }).click();

    const shown = page.getByTestId('secret-once');
    await shown.waitFor();
    const secret = (await page.getByTestId('secret-value').textContent())!;
    expect(secret).toMatch(/^sdx_live_[A-Za-z0-9]{32,}$/);
    expect(await shown.textContent()).toContain('This is the only time it is shown');
    expect(await shown.getByRole('button', { name: 'Copy' }).isVisible()).toBe(true);
    const account = await stack.api.get('/v1/account', { headers: { 'X-API-Key': secret } });
    expect(account.status).toBe(200);

    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.reload();
    const table = page.getByTestId('keys-table');
    await table.getByRole('cell', { name: 'nightly export' }).waitFor();
    expect(await table.textContent()).toContain(`${secret.slice(0, 12)}…`);
    expect(await page.content()).not.toContain(secret);
    expect(await page.getByTestId('secret-once').count()).toBe(0);
  });

  it('runs a sandbox_slow_ job, watches its progress move live over its event stream, and downloads its csv and ndjson', async () => {
    const page = await newPage();
    await signUpInBrowser(page);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'New job' }).click();
    await heading(page, 'New job');
    await page.getByLabel('Platform').selectOption('instagram');
    await page.getByLabel('Operation').selectOption('posts');
    await page.getByLabel('Results per target').fill('60');
    await page.getByLabel('Target', { exact: true }).fill('sandbox_slow_500');
    expect(await page.getByText('A username (for example natgeo)').isVisible()).toBe(true);
    await page.getByTestId('quote').getByText('Reserves at most 120 credits').waitFor();
    await page.getByRole('button', { name: 'Start job' }).click();
    await page.waitForURL(/\/console\/w\/ws_[^/]+\/jobs\/job_/);

    // The page follows the job over its event stream, not by polling.
    await page.getByTestId('live-mode').filter({ hasText: '· live' }).waitFor();
    // Every figure and mode the page showed until the job completed: the figure must have moved
    // through the middle, and the page never fell back to polling.
    const seen = new Set<string>();
    const modes = new Set<string>();
    await eventually(
      async () => {
        seen.add((await page.getByTestId('progress-text').textContent()) ?? '');
        const status = (await page.getByTestId('job-status').textContent()) ?? '';
        modes.add(status.replace(/^.*·\s*/, ''));
        return status.includes('completed');
      },
      60_000,
      50,
    );
    const counts = [...seen].map((text) => Number(/^([\d,]+) of/.exec(text)?.[1]?.replace(/,/g, '') ?? NaN));
    expect(counts.some((n) => n > 0 && n < 60)).toBe(true);
    expect([...modes].filter((m) => /refreshing/.test(m))).toEqual([]);
    await page
      .getByTestId('progress-text')
      .filter({ hasText: /^60 of 60/ })
      .waitFor();
    await page.getByTestId('billed-credits').filter({ hasText: '120 credits' }).waitFor();
    await page.getByTestId('results-table').waitFor();

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/\.csv$/);
    const csv = Papa.parse<Record<string, string>>(readFileSync(await download.path(), 'utf8'), { header: true, skipEmptyLines: true });
    expect(csv.errors).toEqual([]);
    expect(csv.data).toHaveLength(60);
    expect(csv.meta.fields).toEqual(expect.arrayContaining(['kind', 'platform']));
    expect(new Set(csv.data.map((row) => row.platform))).toEqual(new Set(['instagram']));

    const [ndjson] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download NDJSON' }).click()]);
    expect(ndjson.suggestedFilename()).toMatch(/\.ndjson$/);
    const lines = readFileSync(await ndjson.path(), 'utf8')
      .split('\n')
      .filter((line) => line !== '');
    const items = lines.map((line) => JSON.parse(line) as { kind: string; platform: string; id: string });
    expect(items).toHaveLength(60);
    expect(new Set(items.map((item) => item.platform))).toEqual(new Set(['instagram']));
    expect(items.map((item) => item.id)).toEqual(csv.data.map((row) => row.id));
  }, 120_000);

  it('creates a schedule after seeing its next five runs in its zone and in UTC, then runs it now', async () => {
    const page = await newPage();
    await signUpInBrowser(page);
    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.getByRole('link', { name: 'New schedule' }).click();
    await heading(page, 'New schedule');
    await page.getByLabel('Name').fill('Morning profiles');
    await page.getByLabel('Platform').selectOption('instagram');
    await page.getByLabel('Operation').selectOption('profile');
    await page.getByLabel('Targets, one per line').fill('natgeo\nnasa');
    await page.getByLabel('Repeats').selectOption('daily');
    await page.getByLabel('Time zone').selectOption('Europe/Berlin');
    // Two days before Europe's spring change: 09:00 in Berlin is 08:00 UTC, then 07:00 UTC.
    await page.getByLabel('First run (in that zone)').fill('2030-03-29T09:00');

    const rows = page.getByTestId('schedule-preview').locator('tbody tr');
    await eventually(async () => (await rows.count()) === 5 && (await rows.first().textContent())?.includes('29'), 10_000);
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    expect(cells.map(([local]) => /09:00/.test(local))).toEqual([true, true, true, true, true]);
    expect(cells.map(([, utc]) => /(\d\d):00/.exec(utc)?.[1])).toEqual(['08', '08', '07', '07', '07']);

    await page.getByRole('button', { name: 'Create schedule' }).click();
    await heading(page, 'Morning profiles');
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByTestId('schedule-runs').getByText('Ran batch').waitFor();
    expect(await page.getByTestId('schedule-runs').textContent()).toContain('manual');
  });

  it('is usable by keyboard alone: signs in, reaches the skip link, opens the phone menu and goes to a page', async () => {
    const user = await signUpUser(stack, { password: PASSWORD });
    const page = await newPage();
    const focused = async () =>
      await page.evaluate<string>(
        `(document.activeElement?.getAttribute('aria-label') || document.activeElement?.textContent || document.activeElement?.id || '').trim()`,
      );
    await page.goto(`${base}/console/`);
    await heading(page, 'Sign in');
    await page.keyboard.press('Tab');
    await page.keyboard.type(user.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await heading(page, 'Overview');

    // Focus is on the page's content; before it come the skip link, the workspace and the menu.
    expect(await page.evaluate('document.activeElement.id')).toBe('main');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Menu');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Skip to content');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Overview');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Jobs');
    await page.keyboard.press('Enter');
    await heading(page, 'Jobs');
    expect(await page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).toBe('false');
  });

  it('pages through 27 jobs to the oldest by the Link header cursor, and back', async () => {
    const user = await signUpUser(stack, { password: PASSWORD });
    const created: string[] = [];
    for (let i = 0; i < 27; i++) {
      const job = await stack.api.post('/v1/jobs', {
        headers: user.write(),
        body: { platform: 'instagram', operation: 'profile', target: `pager_${i}` },
      });
      expect(job.status).toBe(202);
      created.push(job.body.id);
    }
    const page = await newPage();
    await signInInBrowser(page, user.email, PASSWORD);
    await page.getByRole('link', { name: 'Jobs' }).click();
    await heading(page, 'Jobs');
    const table = page.getByTestId('jobs-table');
    const ids = () => table.locator('tbody tr code').allTextContents();
    await eventually(async () => (await ids()).length === 25, 10_000);
    expect(await ids()).toEqual(created.slice(2).reverse());

    // "Older" asks for the page after the last job shown, with the cursor the Link header named.
    const [older] = await Promise.all([
      page.waitForRequest((r) => new URL(r.url()).pathname === '/v1/jobs' && new URL(r.url()).searchParams.has('starting_after')),
      page.getByRole('button', { name: 'Older →' }).click(),
    ]);
    expect(new URL(older.url()).searchParams.get('starting_after')).toBe(created[2]);
    await eventually(async () => (await ids()).length === 2, 10_000);
    expect(await ids()).toEqual([created[1], created[0]]);
    expect(await page.getByRole('button', { name: 'Older →' }).isDisabled()).toBe(true);

    await page.getByRole('button', { name: '← Newer' }).click();
    await eventually(async () => (await ids()).length === 25, 10_000);
    expect((await ids())[0]).toBe(created[26]);
    expect(await page.getByRole('button', { name: '← Newer' }).isDisabled()).toBe(true);
  });

  it('shows an error in words with its request ID, and the sign-in once the session has ended', async () => {
    const page = await newPage();
    await signUpInBrowser(page);
    await page.goto(`${base}/console/jobs/job_doesnotexist`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/Not found\..*job/i);
    expect(await alert.getByTestId('request-id').textContent()).toMatch(/\S{8,}/);

    // The session ends elsewhere: the next call's 401 brings the sign-in back.
    const ended = await stack.api.post('/v1/auth/logout', { headers: await browserSession(page) });
    expect(ended.status).toBe(204);
    await page.getByRole('link', { name: 'Jobs' }).click();
    await heading(page, 'Sign in');
  });
});

describe('console: the first hour', () => {
  it('heads a wrong password as such, counts in words, and says a cancelled job has nothing to export', async () => {
    const user = await signUpUser(stack, { password: PASSWORD });
    const page = await newPage();
    await page.goto(`${base}/console/`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Wrong email or password.');
    expect(await alert.textContent()).not.toContain('signed out');

    await signInInBrowser(page, user.email, PASSWORD);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'New job' }).click();
    await heading(page, 'New job');
    await page.getByLabel('Platform').selectOption('instagram');
    await page.getByLabel('Operation').selectOption('posts');
    await page.getByLabel('Results per target').fill('1');
    await page.getByLabel('Target', { exact: true }).fill('natgeo');
    await page.getByTestId('quote').getByText('now for 1 target × 1 result;').waitFor();

    const job = await stack.api.post('/v1/jobs', {
      headers: user.write(),
      body: { platform: 'instagram', operation: 'posts', target: 'sandbox_slow_5000', limit: 60 },
    });
    expect(job.body).toMatchObject({ status: expect.stringMatching(/queued|running/) });
    expect((await stack.api.post(`/v1/jobs/${job.body.id}/cancel`, { headers: user.write() })).status).toBeLessThan(300);
    await page.goto(`${base}/console/jobs/${job.body.id}`);
    await page.getByTestId('export-note').filter({ hasText: 'Nothing to export: the work was cancelled' }).waitFor();
    expect(await page.getByText('Exports are ready when the work has finished').count()).toBe(0);
  }, 60_000);

  it('confirms a new team workspace', async () => {
    const page = await newPage();
    await signUpInBrowser(page);
    await page.getByRole('link', { name: 'Settings' }).click();
    await heading(page, 'Settings');
    await page.getByLabel('Team name').fill('Plural Labs');
    await page.getByRole('button', { name: 'Create team workspace' }).click();
    await heading(page, 'Members');
    expect(await page.getByTestId('team-created').textContent()).toContain('Team workspace “Plural Labs” created');
  });
});

describe('console: a team', () => {
  let owner: SessionUser;
  let teamId: string;
  let viewer: SessionUser;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    owner = await signUpUser(stack, { password: PASSWORD, displayName: 'Olive Owner' });
    const team = await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name: 'Acme research' } });
    teamId = team.body.id;
    // A team workspace starts without credits (NEW_TEAM_WORKSPACE_CREDITS 0): grant what its jobs below spend.
    await grantWorkspaceCredits(stack, teamId, 10_000);
    viewer = await signUpUser(stack, { password: PASSWORD, displayName: 'Vic Viewer' });
    const invited = await stack.api.post(`/v1/workspaces/${teamId}/invitations`, {
      headers: owner.write(),
      body: { email: viewer.email, role: 'viewer' },
    });
    await stack.api.post('/v1/invitations/accept', { headers: viewer.write(), body: { token: invited.body.token } });
    const w = owner.write(teamId);
    const job = await stack.api.post('/v1/jobs', {
      headers: w,
      body: { platform: 'instagram', operation: 'posts', target: 'natgeo', limit: 30 },
    });
    ids.job = job.body.id;
    const batch = await stack.api.post('/v1/batches', {
      headers: w,
      body: { platform: 'instagram', operation: 'profile', targets: ['natgeo', 'nasa', 'sandbox_not_found'] },
    });
    ids.batch = batch.body.id;
    const schedule = await stack.api.post('/v1/schedules', {
      headers: w,
      body: {
        name: 'Weekly followers',
        platform: 'twitter',
        operation: 'followers',
        targets: ['nasa'],
        limit: 100,
        frequency: 'weekly',
        timezone: 'America/New_York',
        starts_at: '2030-01-07T08:30:00-05:00',
      },
    });
    ids.schedule = schedule.body.id;
    await stack.api.post(`/v1/schedules/${ids.schedule}/run`, { headers: w });
    await stack.api.post('/v1/keys', { headers: w, body: { name: 'warehouse sync', role: 'viewer' } });
    await eventually(
      async () => (await stack.api.get(`/v1/batches/${ids.batch}`, { headers: owner.read(teamId) })).body.status === 'completed',
      60_000,
    );
  }, 120_000);

  it('invites a member, whose invitation is listed and whose link is shown once', async () => {
    const page = await newPage();
    await signInInBrowser(page, owner.email, PASSWORD);
    await chooseWorkspace(page, teamId);
    await page.getByRole('link', { name: 'Members' }).click();
    await heading(page, 'Members');
    const email = newEmail('grace');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Role', { exact: true }).selectOption('member');
    await page.getByRole('button', { name: 'Invite' }).click();
    const created = page.getByTestId('invitation-created');
    await created.waitFor();
    const link = (await created.locator('code').textContent())!;
    expect(link).toMatch(new RegExp(`^http://.+/console/invitations/accept\\?token=.+`));
    await page.getByTestId('invitations-table').getByRole('cell', { name: email }).waitFor();

    // The invitee follows the link: before signing in, the page names the workspace and who sent it.
    const invitee = await newPage();
    await invitee.goto(link.replace(/^http:\/\/[^/]+/, base));
    const summary = invitee.getByTestId('invitation-summary');
    await summary.waitFor();
    expect(await summary.textContent()).toContain(
      `Olive Owner (${owner.email}) invited you to join the workspace Acme research as a member.`,
    );
    expect(await summary.textContent()).toContain(teamId);
    await pageScreenshots(invitee, 'invitation-sign-in');
    // They sign up with the invited email and join.
    await invitee.getByRole('link', { name: 'Create an account' }).click();
    await invitee.getByLabel('Email').fill(email);
    await invitee.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await invitee.getByRole('button', { name: 'Create account' }).click();
    await heading(invitee, 'Accept an invitation');
    expect(await invitee.getByTestId('invitation-summary').textContent()).toContain('Olive Owner');
    expect(await invitee.getByTestId('invitation-summary').textContent()).toContain('Acme research');
    await pageScreenshots(invitee, 'invitation-accept');
    await invitee.getByRole('button', { name: 'Accept invitation' }).click();
    await heading(invitee, 'Overview');
    expect(new URL(invitee.url()).pathname).toBe(`/console/w/${teamId}/`);
    expect(await invitee.getByText('Workspace Acme research · your role: member').count()).toBe(1);
    // The link, used, says so before anyone accepts again.
    await invitee.goto(link.replace(/^http:\/\/[^/]+/, base));
    await invitee.getByRole('alert').filter({ hasText: 'This invitation no longer works.' }).waitFor();
    const members = await stack.api.get(`/v1/workspaces/${teamId}/members`, { headers: owner.read(teamId) });
    expect(members.body.map((m: { email: string; role: string }) => [m.email, m.role])).toContainEqual([email, 'member']);
  });

  it('carries the workspace in its URLs: a shared link opens its workspace, a switch goes to the same list there, an older URL is redirected, a stranger is told whose it is', async () => {
    const page = await newPage();
    await signInInBrowser(page, owner.email, PASSWORD);
    const personal = owner.personalWorkspaceId;
    expect(new URL(page.url()).pathname).toBe(`/console/w/${personal}/`);
    // A teammate's link to a job of the team opens it in the team, whichever workspace was chosen.
    await page.goto(`${base}/console/w/${teamId}/jobs/${ids.job}`);
    await heading(page, /^Job /);
    expect(await page.getByLabel('Workspace').inputValue()).toBe(teamId);
    // Switching on a detail page opens the same list in the other workspace (the job is not there).
    await page.getByLabel('Workspace').selectOption(personal);
    await heading(page, 'Jobs');
    expect(new URL(page.url()).pathname).toBe(`/console/w/${personal}/jobs`);
    // Back goes to the team's job, and chooses the team again.
    await page.goBack();
    await heading(page, /^Job /);
    expect(await page.getByLabel('Workspace').inputValue()).toBe(teamId);
    // A list page stays the same page; the menu's links carry the workspace.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Schedules' }).click();
    await heading(page, 'Schedules');
    expect(new URL(page.url()).pathname).toBe(`/console/w/${teamId}/schedules`);
    await page.getByLabel('Workspace').selectOption(personal);
    await page.waitForURL(`${base}/console/w/${personal}/schedules`);
    await heading(page, 'Schedules');
    // A URL without a workspace (older links) opens the page in the chosen workspace.
    await page.goto(`${base}/console/batches?x=1`);
    await heading(page, 'Batches');
    expect(`${new URL(page.url()).pathname}${new URL(page.url()).search}`).toBe(`/console/w/${personal}/batches?x=1`);

    // Someone outside the team follows the same link: told which workspace it is, nothing of it shown.
    const stranger = await signUpUser(stack, { password: PASSWORD });
    const other = await newPage();
    await signInInBrowser(other, stranger.email, PASSWORD);
    await other.goto(`${base}/console/w/${teamId}/jobs/${ids.job}`);
    await heading(other, 'Not a member of this workspace');
    expect(await other.getByTestId('not-a-member').textContent()).toContain(teamId);
    await pageScreenshots(other, 'not-a-member');
    expect(await other.getByLabel('Workspace').inputValue()).toBe(stranger.personalWorkspaceId);
    expect(await seriousA11yViolations(other)).toEqual([]);
  });

  it('names the members in the audit log rather than their IDs', async () => {
    const page = await newPage();
    await signInInBrowser(page, owner.email, PASSWORD);
    await chooseWorkspace(page, teamId);
    await page.getByRole('link', { name: 'Audit events' }).click();
    await heading(page, 'Audit events');
    await page.getByTestId('audit-table').getByText(`Olive Owner (${owner.email})`, { exact: true }).first().waitFor();
    const members = await stack.api.get(`/v1/workspaces/${teamId}/members`, { headers: owner.read(teamId) });
    const ownerId = members.body.find((m: { email: string }) => m.email === owner.email).user_id as string;
    expect(await page.getByTestId('audit-table').textContent()).not.toContain(ownerId);
    // Details as fields, one a line and wrapped, not raw JSON cut off by the column.
    const details = page.getByTestId('audit-details').first();
    await details.waitFor();
    expect(await details.locator('dt').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('audit-table').textContent()).not.toContain('{"');
  });

  it('shows a viewer no write controls on any page', async () => {
    const page = await newPage();
    await signInInBrowser(page, viewer.email, PASSWORD);
    await chooseWorkspace(page, teamId);
    expect(await page.getByText('your role: viewer').count()).toBe(1);
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.getByRole('link', { name: 'New job' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Audit events' }).count()).toBe(0);

    // Buttons that read or move around: everything else would change the workspace. "Leave" is
    // the viewer's own membership; Settings is the user's (own password, own new team).
    const reading = new Set(['← Newer', 'Older →', 'Download JSON', 'Download CSV', 'Download Excel (xlsx)', 'Download NDJSON', 'Leave']);
    // The results browser's paging and column picker only change what is shown.
    for (const name of ['First page', '← Previous', 'Next →', 'Show all', 'Default columns']) reading.add(name);
    // The getting-started checklist's copy buttons and its dismissal change nothing on the service.
    for (const name of ['Copy', 'Dismiss']) reading.add(name);
    const pages: Array<[string, string | RegExp]> = [
      ['/', 'Overview'],
      ['/jobs', 'Jobs'],
      [`/jobs/${ids.job}`, /^Job /],
      ['/batches', 'Batches'],
      [`/batches/${ids.batch}`, /^Batch /],
      ['/schedules', 'Schedules'],
      [`/schedules/${ids.schedule}`, 'Weekly followers'],
      ['/keys', 'API keys'],
      ['/members', 'Members'],
      ['/webhooks', 'Webhooks'],
      ['/destinations', 'Destinations'],
      ['/jobs/new', 'New job'],
      ['/batches/new', 'New batch'],
      ['/schedules/new', 'New schedule'],
    ];
    for (const [where, title] of pages) {
      await page.goto(`${base}/console/w/${teamId}${where}`);
      await heading(page, title);
      await page.waitForLoadState('networkidle');
      const writes = (await visibleButtons(page)).filter((name) => !reading.has(name));
      expect({ where, writes }).toEqual({ where, writes: [] });
      expect({ where, forms: await page.locator('main form:not(.filters):not([method="dialog"])').count() }).toEqual({ where, forms: 0 });
      expect({ where, links: await page.locator('main a[href$="/new"], main a[href$="/edit"]').count() }).toEqual({ where, links: 0 });
      expect({ where, selects: await page.locator('main td select').count() }).toEqual({ where, selects: 0 });
    }
  });

  it('passes axe (no serious or critical violation) on every page, at desktop and phone width, and saves their screenshots', async () => {
    const page = await newPage();
    const violations: Record<string, unknown> = {};
    const check = async (name: string) => {
      await page.waitForLoadState('networkidle');
      const found = await seriousA11yViolations(page);
      if (found.length > 0) violations[`${name} (desktop)`] = found;
      await pageScreenshots(page, name);
      await page.setViewportSize({ width: 390, height: 844 });
      const phone = await seriousA11yViolations(page);
      if (phone.length > 0) violations[`${name} (phone)`] = phone;
      const width = await page.evaluate<number>('document.documentElement.scrollWidth');
      if (width > 390) violations[`${name} (phone)`] = `the page is ${width} px wide on a 390 px screen`;
      await page.setViewportSize({ width: 1280, height: 800 });
    };
    await page.goto(`${base}/console/`);
    await heading(page, 'Sign in');
    await check('sign-in');
    await page.goto(`${base}/console/signup`);
    await heading(page, 'Create an account');
    await check('sign-up');

    await signInInBrowser(page, owner.email, PASSWORD);
    await chooseWorkspace(page, teamId);
    const pages: Array<[string, string, string | RegExp]> = [
      ['overview', '/', 'Overview'],
      ['new-job', '/jobs/new', 'New job'],
      ['new-batch', '/batches/new', 'New batch'],
      ['jobs', '/jobs', 'Jobs'],
      ['job', `/jobs/${ids.job}`, /^Job /],
      ['batches', '/batches', 'Batches'],
      ['batch', `/batches/${ids.batch}`, /^Batch /],
      ['schedules', '/schedules', 'Schedules'],
      ['schedule', `/schedules/${ids.schedule}`, 'Weekly followers'],
      ['schedule-new', '/schedules/new', 'New schedule'],
      ['keys', '/keys', 'API keys'],
      ['members', '/members', 'Members'],
      ['webhooks', '/webhooks', 'Webhooks'],
      ['destinations', '/destinations', 'Destinations'],
      ['audit', '/audit', 'Audit events'],
      ['settings', '/settings', 'Settings'],
      ['security', '/security', 'Security'],
    ];
    for (const [name, where, title] of pages) {
      await page.goto(`${base}/console/w/${teamId}${where}`);
      await heading(page, title);
      if (name === 'new-job') {
        await page.getByLabel('Target', { exact: true }).fill('natgeo');
        await page.getByTestId('quote').waitFor();
      }
      if (name === 'new-batch') {
        await page.getByLabel('Targets, one per line').fill('natgeo\nnasa\nNatGeo');
        await page.getByText('Duplicated: NatGeo').waitFor();
      }
      if (name === 'schedule-new') await page.getByTestId('schedule-preview').waitFor();
      if (name === 'job') await page.getByTestId('results-table').waitFor();
      await check(name);
    }
    // The menu of the phone layout, opened.
    await page.goto(`${base}/console/`);
    await heading(page, 'Overview');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Jobs' }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(violations).toEqual({});
    // Seventeen pages, each checked twice by axe and photographed: room for a loaded machine.
  }, 300_000);
});

describe('console: getting started', () => {
  it('opens the user’s default workspace after sign-in (the demo user’s demo workspace), not the personal one', async () => {
    const demo = await signUpUser(stack, { password: PASSWORD, displayName: 'Demo' });
    const team = await stack.api.post('/v1/workspaces', { headers: demo.write(), body: { name: 'Demo workspace' } });
    // What the start script's seeding does for demo@example.com.
    // As npm start does for the demo user (setDefaultWorkspace; apps/api/test/start-demo.test.ts covers the seeding).
    await stack.runtime.db.updateTable('users').set({ default_workspace_id: team.body.id }).where('id', '=', demo.userId).execute();
    const page = await newPage();
    await signInInBrowser(page, demo.email, PASSWORD);
    await page.getByText('Workspace Demo workspace · your role: owner').waitFor();
    // The personal workspace stays one switch away, and the choice sticks over a reload.
    await chooseWorkspace(page, demo.personalWorkspaceId);
    await page.reload();
    await page.getByText('Workspace Personal · your role: owner').waitFor();
  });

  it('shows a new account a checklist whose example job runs in one click, links the console to /docs and back, and labels the latest day', async () => {
    const page = await newPage();
    await signUpInBrowser(page);
    const checklist = page.getByTestId('getting-started');
    await checklist.waitFor();
    expect(await checklist.getByRole('link', { name: 'Make an API key' }).getAttribute('href')).toMatch(/^\/console\/w\/ws_[^/]+\/keys$/);
    expect(await checklist.getByRole('link', { name: 'API reference' }).first().getAttribute('href')).toBe('/docs');
    // Installable from the first screen: the tarballs of the clone, never `npx sdx` (an unclaimed name on npm).
    const text = (await checklist.textContent()) ?? '';
    expect(text).toContain('npm install /tmp/sdx-sdk-1.0.0.tgz');
    expect(text).toContain('pip install ./clients/python');
    expect(text).not.toContain('npx sdx');
    expect(await checklist.getByRole('button', { name: 'Copy' }).count()).toBe(4);
    // Nothing done yet in a new account: every step open.
    for (const step of ['step-key', 'step-job', 'step-reference', 'step-client'])
      expect(await page.getByTestId(step).getAttribute('data-done')).toBe('false');
    expect(await page.getByTestId('getting-started-left').textContent()).toBe('4 of 4 steps left.');
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await checklist.getByRole('button', { name: 'Copy' }).nth(2).click();
    await page.getByTestId('step-client').and(page.locator('[data-done="true"]')).waitFor();
    await page.waitForLoadState('networkidle');
    expect(await seriousA11yViolations(page)).toEqual([]);

    // The usage chart's legend names the latest day while nothing is hovered.
    const today = new Date().toISOString().slice(0, 10);
    await eventually(async () => (await page.locator('.chart .u-legend').textContent())?.includes(today), 5_000, 100);
    expect(await page.locator('.chart .u-legend').textContent()).not.toContain('--');
    // A day, not a time of day.
    expect(await page.locator('.chart .u-legend').textContent()).not.toMatch(/\d{1,2}:\d{2}\s*[ap]m/i);

    // The menu links to the API reference, whose page links back to the console.
    const docs = page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'API reference' });
    expect(await docs.getAttribute('href')).toBe('/docs');

    await checklist.getByRole('button', { name: 'Try an example job' }).click();
    await page.waitForURL(/\/console\/w\/ws_[^/]+\/jobs\/job_/);
    const jobId = /\/jobs\/(job_[^/?#]+)/.exec(page.url())![1];
    const job = await stack.api.get(`/v1/jobs/${jobId}`, { headers: await browserSession(page) });
    expect(job.body).toMatchObject({ platform: 'instagram', operation: 'profile', target: 'natgeo' });
    await page.getByTestId('job-status').filter({ hasText: 'completed' }).waitFor({ timeout: 30_000 });
    // One "Attempts": the row, under a heading of its own name.
    expect(await page.getByRole('heading', { name: 'Timeline' }).count()).toBe(1);
    expect(await page.getByRole('heading', { name: 'Attempts' }).count()).toBe(0);

    // The jobs list at phone width: each job's status and target in view without scrolling sideways.
    await page.setViewportSize({ width: 390, height: 800 });
    await page.goto(`${base}/console/jobs`);
    await heading(page, 'Jobs');
    const row = page.getByTestId('jobs-table').locator('tbody tr').first();
    await row.waitFor();
    for (const cell of [row.locator('.badge'), row.locator('.target')]) {
      const box = (await cell.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(390);
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    // Back on the overview (a reload): the checklist stays, the job's step ticked, the credits already spent.
    await page.goto(`${base}/console/`);
    await heading(page, 'Overview');
    await page.getByTestId('step-job').and(page.locator('[data-done="true"]')).waitFor();
    expect(await page.getByTestId('step-client').getAttribute('data-done')).toBe('true');
    expect(await page.getByTestId('step-key').getAttribute('data-done')).toBe('false');
    expect(await page.getByTestId('getting-started-left').textContent()).toBe('2 of 4 steps left.');
    const usage = await stack.api.get('/v1/usage/current', { headers: await browserSession(page) });
    await eventually(
      async () => (await page.getByTestId('credits-left').textContent())?.trim() === usage.body.credits_remaining.toLocaleString('en-US'),
      15_000,
      200,
    );
    // Dismissed, it is gone, and stays gone after a reload.
    await page.getByTestId('getting-started').getByRole('button', { name: 'Dismiss' }).click();
    expect(await page.getByTestId('getting-started').count()).toBe(0);
    await page.reload();
    await heading(page, 'Overview');
    await page.waitForLoadState('networkidle');
    expect(await page.getByTestId('getting-started').count()).toBe(0);

    // The menu's link opens the reference (whose own link back to the console, and its render,
    // apps/api/test/api-reference.test.ts checks in a browser: not rendered twice).
    await docs.click();
    await page.waitForURL(`${base}/docs`, { waitUntil: 'commit' });
  }, 120_000);
});
