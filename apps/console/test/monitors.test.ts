import type { Server } from 'node:http';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  eventually,
  grantWorkspaceCredits,
  listen,
  passMonitors,
  signUpUser,
  startTestStack,
  startWebhookReceiver,
  type SessionUser,
  type TestStack,
  type WebhookReceiver,
} from '@sdx/testing';
import { type AxeViolation, DESKTOP, heading, launchBrowser, newPageIn, PHONE, seriousA11yViolations, screenshot } from './browser';

/**
 * The Monitors pages in Chromium against the real service (API, worker, Postgres, Redis, the
 * sandbox): a monitor of three drifting profiles made with the form (only monitorable operations
 * offered, its credits per run and per month shown before and after), run twice by hand; its page
 * then shows three lines in the followers chart, the latest values, a changes feed whose change
 * fired the alert, and the alert reached a webhook receiver as `monitor.alert`. Pause, resume and
 * delete from the page. Screenshots go to docs/console/monitors/ (with SCREENSHOTS=1). The three tests share the
 * monitor and the page, in order.
 */
let stack: TestStack;
let server: Server;
let base: string;
let browser: Browser;
let user: SessionUser;
let receiver: WebhookReceiver;
const contexts: BrowserContext[] = [];
const SHOTS = path.resolve(__dirname, '..', '..', '..', 'docs', 'console', 'monitors');
const PASSWORD = 'correct horse battery';
const TARGETS = ['alpha_sandbox_drift_100', 'beta_sandbox_drift_200', 'gamma_sandbox_drift_300'];
const violations: Record<string, AxeViolation[]> = {};
let page: Page;
let monitorId: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startTestStack({ withWorker: true, env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' } });
  ({ url: base, server } = await listen(stack.app));
  user = await signUpUser(stack, { password: PASSWORD });
  await grantWorkspaceCredits(stack, user.personalWorkspaceId, 1_000);
  const hook = await stack.api.post('/v1/webhooks', { headers: user.write(), body: { url: receiver.url, events: ['*'] } });
  if (hook.status !== 201) throw new Error(`POST /v1/webhooks answered ${hook.status}: ${JSON.stringify(hook.body)}`);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
  await receiver?.close();
});

/** Axe's serious findings, kept for the end, and the page's screenshots at desktop and phone width. */
async function check(page: Page, name: string): Promise<void> {
  for (const [width, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    const found = await seriousA11yViolations(page);
    if (found.length > 0) violations[`${name}-${width}`] = found;
    await screenshot(page, path.join(SHOTS, `${name}-${width}.png`));
  }
  await page.setViewportSize(DESKTOP);
}

/** The scheduler's pass over monitors (this stack runs no scheduler): it advances open runs, then counts the completed ones. */
async function completedRuns(monitorId: string): Promise<number> {
  await passMonitors(stack);
  const res = await stack.api.get(`/v1/monitors/${monitorId}/runs`, { headers: user.read() });
  expect(res.status).toBe(200);
  const runs = res.body.data as Array<{ status: string }>;
  expect(runs.every((r) => r.status !== 'failed' && r.status !== 'skipped_credits')).toBe(true);
  return runs.filter((r) => r.status === 'completed').length;
}

it('creates a monitor of three drifting profiles with the form, runs it twice, and shows three lines and the latest values', async () => {
  page = await newPageIn(browser, contexts);
  page.setDefaultTimeout(30_000);
  await page.goto(`${base}/console/`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await heading(page, 'Overview');

  await page.getByRole('link', { name: 'Monitors' }).click();
  await heading(page, 'Monitors');
  await page.getByText('No monitor yet.').waitFor();
  await page.getByRole('link', { name: 'New monitor' }).click();
  await heading(page, 'New monitor');

  // Only monitorable operations are offered: the catalog's other operations are not.
  const platforms = (await stack.api.get('/v1/platforms', { headers: user.read() })).body as Array<{
    platform: string;
    operations: Array<{ operation: string; monitorable: boolean }>;
  }>;
  await page.getByLabel('Platform').selectOption('instagram');
  const offered = await page
    .getByLabel('Operation')
    .locator('option')
    .evaluateAll((options) => options.map((o) => o.getAttribute('value') ?? ''));
  const instagram = platforms.find((p) => p.platform === 'instagram')!;
  expect(offered.sort()).toEqual(
    instagram.operations
      .filter((o) => o.monitorable)
      .map((o) => o.operation)
      .sort(),
  );
  expect(offered).not.toContain('followers');
  await page.getByLabel('Operation').selectOption('profile');

  await page.getByLabel('Name', { exact: true }).fill('Competitors');
  await page.getByLabel('Targets, one per line').fill(TARGETS.join('\n'));
  await page.getByLabel('Runs').selectOption('daily');
  // A profile costs 1 credit: 3 a run, 90 a month of daily runs; the form says so before creation.
  await page.getByTestId('monitor-estimate').filter({ hasText: '3 credits per run' }).waitFor();
  expect(await page.getByTestId('monitor-estimate').textContent()).toContain('90 credits per month');
  await page.getByRole('button', { name: 'Add an alert' }).click();
  await page.getByLabel('Alert 1: metric').selectOption('followers_count');
  await page.getByLabel('Alert 1: when').selectOption('change_pct_above');
  // Any growth at all between two runs: the drift is a tiny fraction of the followers.
  await page.getByLabel('Alert 1: threshold').fill('0.0000001');
  await page.getByLabel('Alert 1: target').selectOption(TARGETS[1]);
  await check(page, 'monitor-new');
  await page.getByRole('button', { name: 'Create monitor' }).click();
  await heading(page, 'Competitors');
  monitorId = new URL(page.url()).pathname.split('/').at(-1)!;
  expect(monitorId).toMatch(/^mon_/);
  expect(await page.getByTestId('monitor-credits').textContent()).toContain('3 credits per run, 90 credits per month');
  const stored = await stack.api.get(`/v1/monitors/${monitorId}`, { headers: user.read() });
  expect(stored.body).toMatchObject({
    name: 'Competitors',
    platform: 'instagram',
    operation: 'profile',
    targets: TARGETS,
    frequency: 'daily',
    alerts: [{ metric: 'followers_count', condition: 'change_pct_above', threshold: 0.0000001, target: TARGETS[1] }],
    estimated_credits_per_run: 3,
    estimated_credits_per_month: 90,
  });

  // Run now, twice, a couple of seconds apart (the drift counts whole seconds).
  await page.getByRole('button', { name: 'Run now' }).click();
  await eventually(async () => (await completedRuns(monitorId)) === 1, 60_000, 250);
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  await page.getByRole('button', { name: 'Run now' }).click();
  await eventually(async () => (await completedRuns(monitorId)) === 2, 60_000, 250);

  // Three lines in the followers chart, one per target.
  await page.locator('[data-testid="chart-followers_count"][data-lines="3"]').waitFor();
  const legend = await page.getByTestId('chart-followers_count').locator('.u-legend .u-series th').allTextContents();
  expect(legend.filter((label) => TARGETS.includes(label.trim()))).toHaveLength(3);
  // The latest values: a row per series.
  expect(await page.getByTestId('monitor-latest').locator('tbody tr').count()).toBe(9);
  expect(await page.getByTestId('monitor-alerts').textContent()).toContain(`followers_count of ${TARGETS[1]} changes by at least 1e-7 %`);

  // Pause and resume from the page.
  await page.getByRole('button', { name: 'Pause' }).click();
  await page.getByRole('button', { name: 'Resume' }).waitFor();
  expect((await stack.api.get(`/v1/monitors/${monitorId}`, { headers: user.read() })).body.status).toBe('paused');
  await page.getByRole('button', { name: 'Resume' }).click();
  await page.getByRole('button', { name: 'Pause' }).waitFor();
  expect((await stack.api.get(`/v1/monitors/${monitorId}`, { headers: user.read() })).body.status).toBe('active');
  await check(page, 'monitor-detail');
}, 180_000);

it('shows the changes feed, marks the change that fired the alert, and the alert reached the webhook once', async () => {
  expect(monitorId).toMatch(/^mon_/);
  // Each target's followers grew between the runs: a changes feed of metric_changed rows.
  const changes = page.getByTestId('monitor-changes').locator('tbody tr');
  await changes.filter({ hasText: TARGETS[0] }).filter({ hasText: 'followers_count' }).first().waitFor();
  for (const target of TARGETS)
    expect(await changes.filter({ hasText: target }).filter({ hasText: 'metric changed' }).count()).toBeGreaterThan(0);
  // The alert's target's change is marked as having fired it; the others' are not.
  const fired = changes.filter({ hasText: 'change pct above' });
  expect(await fired.count()).toBe(1);
  expect(await fired.textContent()).toContain(TARGETS[1]);

  // The alert reached the webhook receiver, once.
  const alerts = await eventually(
    () => {
      const events = receiver.messages.map((m) => JSON.parse(m.body) as { type: string; data: Record<string, unknown> });
      const found = events.filter((e) => e.type === 'monitor.alert');
      return found.length > 0 && events.some((e) => e.type === 'monitor.run.completed') ? found : null;
    },
    30_000,
    200,
  );
  expect(alerts).toHaveLength(1);
  expect(alerts[0].data).toMatchObject({
    monitor_id: monitorId,
    target: TARGETS[1],
    metric: 'followers_count',
    condition: 'change_pct_above',
  });

  await check(page, 'monitor-detail');
}, 60_000);

it('lists the monitor and deletes it from its page', async () => {
  expect(monitorId).toMatch(/^mon_/);
  await page.getByRole('link', { name: 'Monitors' }).click();
  const row = page.getByTestId('monitors-table').locator('tbody tr').filter({ hasText: 'Competitors' });
  await row.waitFor();
  expect(await row.textContent()).toContain('3 targets');
  await check(page, 'monitors');
  await row.getByRole('link', { name: 'Competitors' }).click();
  await heading(page, 'Competitors');
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.getByText('No monitor yet.').waitFor();
  expect((await stack.api.get(`/v1/monitors/${monitorId}`, { headers: user.read() })).status).toBe(404);

  expect(violations).toEqual({});
}, 180_000);
