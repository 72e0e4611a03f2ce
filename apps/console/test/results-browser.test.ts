import type { Server } from 'node:http';
import path from 'node:path';
import Papa from 'papaparse';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually, grantWorkspaceCredits, listen, signUpUser, startTestStack, type SessionUser, type TestStack } from '@sdx/testing';
import { type AxeViolation, DESKTOP, launchBrowser, PHONE, seriousA11yViolations, newPageIn, screenshot, closeContexts } from './browser';

/**
 * The results browser of the job and batch pages (issue 39, item 3) in Chromium against the
 * real service (API, worker, Postgres, Redis, the sandbox provider): a 5,000-follower job paged
 * forward to its last page and back with nothing lost or repeated (five pages of 1,000 rows each
 * way: drawing the table is what costs here; jobs-large, exports and mcp-tools page 25,000 items
 * through the API), the csv's columns and their
 * picker (remembered per operation), nested fields as text, the filter of the page, username kept
 * in sight on a wide table, a batch of 100 children, and axe on desktop and phone. Screenshots go
 * to docs/console/results/ (the pictures of docs/console/results.md) with SCREENSHOTS=1.
 */
let stack: TestStack;
let server: Server;
let base: string;
let browser: Browser;
let user: SessionUser;
const contexts: BrowserContext[] = [];
const SHOTS = path.resolve(__dirname, '..', '..', '..', 'docs', 'console', 'results');
const PASSWORD = 'correct horse battery';
const BATCH_TARGETS = Array.from({ length: 100 }, (_, i) => `results_child_${String(i + 1).padStart(3, '0')}`);
const violations: Record<string, AxeViolation[]> = {};
/** The pages and widths axe has looked at. */
const checked = new Set<string>();

let bigJob: string;
let postsJob: string;
let batchId: string;
/** The big job's item IDs as GET /v1/jobs/{job_id}/items answers them, in order. */
let bigIds: string[];

async function apiItems(jobId: string): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  do {
    const res = await stack.api.get(`/v1/jobs/${jobId}/items`, {
      headers: user.read(),
      query: { limit: 1000, ...(cursor ? { cursor } : {}) },
    });
    expect(res.status).toBe(200);
    items.push(...(res.body.items as Array<Record<string, unknown>>));
    cursor = res.body.next_cursor;
  } while (cursor !== null);
  return items;
}

beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
  ({ url: base, server } = await listen(stack.app));
  user = await signUpUser(stack, { password: PASSWORD });
  // 5,000 followers at 2 credits, the posts job and the batch.
  await grantWorkspaceCredits(stack, user.personalWorkspaceId, 60_000);
  const create = async (path: string, body: Record<string, unknown>) => {
    const res = await stack.api.post(path, { headers: user.write(), body });
    if (res.status !== 202) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  };
  bigJob = await create('/v1/jobs', { platform: 'twitter', operation: 'followers', target: 'results_big', limit: 5_000 });
  postsJob = await create('/v1/jobs', { platform: 'instagram', operation: 'posts', target: 'results_posts', limit: 40 });
  batchId = await create('/v1/batches', { platform: 'instagram', operation: 'posts', targets: BATCH_TARGETS, limit: 3 });
  await eventually(async () => {
    const rows = await stack.runtime.db
      .selectFrom('jobs')
      .select('status')
      .where((eb) => eb.or([eb('id', 'in', [bigJob, postsJob]), eb('batch_id', '=', batchId)]))
      .execute();
    return rows.length === 102 && rows.every((r) => r.status === 'completed');
  }, 120_000);
  bigIds = (await apiItems(bigJob)).map((item) => item.id as string);
  browser = await launchBrowser();
}, 180_000);

// Each test opens its own pages: closed after it, they stop polling the service meanwhile.
afterEach(() => closeContexts(contexts));

afterAll(async () => {
  await closeContexts(contexts);
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
});

async function signedInPage(): Promise<Page> {
  const page = await newPageIn(browser, contexts);
  page.setDefaultTimeout(20_000);
  await page.goto(`${base}/console/`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  return page;
}

async function openJob(page: Page, jobId: string): Promise<void> {
  await page.goto(`${base}/console/jobs/${jobId}`);
  await page.getByRole('heading', { level: 1, name: `Job ${jobId}` }).waitFor();
  await page.getByTestId('results-table').waitFor();
}

const range = (page: Page) => page.getByTestId('results-range');
async function waitForRange(page: Page, text: string): Promise<void> {
  await range(page).filter({ hasText: text }).waitFor();
}

/** The header row's column names (the row number first). */
const headers = (page: Page) => page.getByTestId('results-table').locator('thead th').allTextContents();

/** The values of one column on the page shown. */
async function columnValues(page: Page, column: string): Promise<string[]> {
  return page
    .getByTestId('results-table')
    .locator(`tbody td.col-${column.replace(/[^a-z0-9_-]/gi, '-')}`)
    .allTextContents();
}

/** Axe's serious findings, kept for the end, and the page's screenshots at desktop and phone width. */
async function check(page: Page, name: string, options: { shots?: boolean } = {}): Promise<void> {
  for (const [width, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    const found = await seriousA11yViolations(page);
    checked.add(`${name}-${width}`);
    if (found.length > 0) violations[`${name}-${width}`] = found;
    if (options.shots !== false) await screenshot(page, path.join(SHOTS, `${name}-${width}.png`));
  }
  await page.setViewportSize(DESKTOP);
}

it('pages a 5,000-item job forward to its last page and back, losing and repeating no item', async () => {
  expect(bigIds).toHaveLength(5_000);
  expect(new Set(bigIds).size).toBe(5_000);
  const page = await signedInPage();
  await openJob(page, bigJob);

  // The first page, at the default size, is the result's first 100 items, numbered.
  await waitForRange(page, 'Items 1–100 of 5,000');
  expect(await columnValues(page, 'id')).toEqual(bigIds.slice(0, 100));
  expect(await columnValues(page, '#')).toEqual(Array.from({ length: 100 }, (_, i) => String(i + 1)));
  await page.getByRole('button', { name: 'Next →' }).first().click();
  await waitForRange(page, 'Items 101–200 of 5,000');
  expect(await columnValues(page, 'id')).toEqual(bigIds.slice(100, 200));
  await check(page, 'job-followers');

  // A new page size starts again from the first item.
  await page.getByLabel('Items per page').selectOption('1000');
  await waitForRange(page, 'Items 1–1,000 of 5,000');
  const seen: string[] = [];
  const next = page.getByRole('button', { name: 'Next →' }).first();
  const previous = page.getByRole('button', { name: '← Previous' }).first();
  expect(await previous.isDisabled()).toBe(true);
  for (let n = 1; ; n++) {
    const from = (n - 1) * 1000 + 1;
    await waitForRange(page, `Items ${from.toLocaleString('en-US')}–${(n * 1000).toLocaleString('en-US')} of 5,000`);
    const ids = await columnValues(page, 'id');
    expect(ids).toHaveLength(1000);
    seen.push(...ids);
    if (n === 5) break;
    await next.click();
  }
  // The last page: nothing after it.
  expect(await next.isDisabled()).toBe(true);
  expect(seen).toEqual(bigIds);
  expect((await columnValues(page, '#')).at(-1)).toBe('5,000');

  // Back to the first page, one page at a time, each page as it was.
  for (let n = 4; n >= 1; n--) {
    await previous.click();
    await waitForRange(page, `Items ${((n - 1) * 1000 + 1).toLocaleString('en-US')}–${(n * 1000).toLocaleString('en-US')} of 5,000`);
    expect(await columnValues(page, 'id')).toEqual(bigIds.slice((n - 1) * 1000, n * 1000));
  }
  expect(await previous.isDisabled()).toBe(true);
  await next.click();
  await waitForRange(page, 'Items 1,001–2,000 of 5,000');
  await page.getByRole('button', { name: 'First page' }).first().click();
  await waitForRange(page, 'Items 1–1,000 of 5,000');
  expect(await columnValues(page, 'id')).toEqual(bigIds.slice(0, 1000));
}, 240_000);

it('jumps to the last page without reading the ones before it, and steps back from there', async () => {
  const page = await signedInPage();
  const asked: string[] = [];
  page.on('request', (request) => {
    if (request.url().includes(`/v1/jobs/${bigJob}/items`)) asked.push(new URL(request.url()).search);
  });
  await openJob(page, bigJob);
  await page.getByLabel('Items per page').selectOption('250');
  await waitForRange(page, 'Items 1–250 of 5,000');
  const last = page.getByRole('button', { name: 'Last page' }).first();
  const next = page.getByRole('button', { name: 'Next →' }).first();
  const previous = page.getByRole('button', { name: '← Previous' }).first();
  asked.length = 0;
  await last.click();
  // 5,000 items at 250 a page: the last page starts at item 4,751, asked for by its offset.
  await waitForRange(page, 'Items 4,751–5,000 of 5,000');
  expect(await columnValues(page, 'id')).toEqual(bigIds.slice(4_750));
  expect((await columnValues(page, '#')).at(-1)).toBe('5,000');
  expect(asked).toContain('?limit=250&offset=4750');
  expect(asked.filter((query) => !query.includes('offset='))).toEqual([]);
  expect(await last.isDisabled()).toBe(true);
  expect(await next.isDisabled()).toBe(true);
  // Previous from there reads the page before it, and Next goes forward again by its cursor.
  await previous.click();
  await waitForRange(page, 'Items 4,501–4,750 of 5,000');
  expect(await columnValues(page, 'id')).toEqual(bigIds.slice(4_500, 4_750));
  expect(await last.isDisabled()).toBe(false);
  await next.click();
  await waitForRange(page, 'Items 4,751–5,000 of 5,000');
  expect(await columnValues(page, 'id')).toEqual(bigIds.slice(4_750));
  await page.getByRole('button', { name: 'First page' }).first().click();
  await waitForRange(page, 'Items 1–250 of 5,000');
  expect(await columnValues(page, 'id')).toEqual(bigIds.slice(0, 250));
}, 120_000);

it('shows the csv export’s columns in its order, and the picker’s choice is remembered per operation', async () => {
  const csv = await fetch(`${base}/v1/jobs/${postsJob}/export?format=csv`, { headers: user.read() });
  expect(csv.status).toBe(200);
  const parsed = Papa.parse<string[]>(await csv.text(), { skipEmptyLines: true });
  const csvColumns = parsed.data[0];
  expect(csvColumns.slice(0, 7)).toEqual(['kind', 'platform', 'id', 'username', 'caption', 'url', 'published_at']);
  expect(csvColumns).toEqual(expect.arrayContaining(['metrics.views', 'hashtags', 'extra']));

  const page = await signedInPage();
  await openJob(page, postsJob);
  await waitForRange(page, 'Items 1–40 of 40');
  const picker = page.getByTestId('column-picker');
  await picker.getByText(/^Columns \(/).click();
  const choices = picker.getByRole('checkbox');
  // The picker lists every csv column, in the csv's order; the table shows the checked ones in that order.
  const labels = (await picker.locator('label').allTextContents()).map((t) => t.trim());
  expect(labels).toEqual(csvColumns);
  const checked: string[] = [];
  for (let i = 0; i < labels.length; i++) if (await choices.nth(i).isChecked()) checked.push(labels[i]);
  expect(await headers(page)).toEqual(['#', ...checked]);
  // Shown by default: the fields that differ item to item; not kind, platform or extra.
  expect(checked).toEqual(expect.arrayContaining(['id', 'username', 'caption', 'metrics.views', 'metrics.likes', 'hashtags']));
  expect(checked).not.toEqual(expect.arrayContaining(['kind']));
  expect(checked.includes('platform') || checked.includes('extra')).toBe(false);
  await check(page, 'column-picker');

  // Hide url, show extra: the table follows at once, in csv order.
  await picker.getByLabel('url', { exact: true }).uncheck();
  await picker.getByLabel('extra', { exact: true }).check();
  const afterChoice = await headers(page);
  expect(afterChoice).not.toContain('url');
  expect(afterChoice.at(-1)).toBe('extra');
  expect(afterChoice.slice(1)).toEqual(csvColumns.filter((c) => afterChoice.includes(c)));
  // `extra` (what the csv writes as JSON text) reads as "key: value".
  expect(new Set(await columnValues(page, 'extra'))).toEqual(new Set(['source: sandbox']));

  // Remembered: after a reload, and on a batch child of the same operation (instagram posts).
  await page.reload();
  await page.getByTestId('results-table').waitFor();
  expect(await headers(page)).toEqual(afterChoice);
  await page.goto(`${base}/console/batches/${batchId}`);
  await page.getByTestId('batch-results').getByTestId('results-table').waitFor();
  expect(await headers(page)).toEqual(afterChoice);

  // Another operation keeps its own columns; "Default columns" forgets the choice.
  await openJob(page, bigJob);
  expect(await headers(page)).toContain('username');
  expect(await headers(page)).not.toContain('extra');
  await openJob(page, postsJob);
  await page
    .getByTestId('column-picker')
    .getByText(/^Columns \(/)
    .click();
  await page.getByRole('button', { name: 'Default columns' }).click();
  expect(await headers(page)).toEqual(['#', ...checked]);
  await page.reload();
  await page.getByTestId('results-table').waitFor();
  expect(await headers(page)).toEqual(['#', ...checked]);
}, 120_000);

it('shows nested fields as readable text, never raw JSON, and keeps username in sight on a wide table', async () => {
  const items = await apiItems(postsJob);
  const page = await signedInPage();
  await openJob(page, postsJob);
  await waitForRange(page, 'Items 1–40 of 40');
  // Show every column: the widest table there is.
  const picker = page.getByTestId('column-picker');
  await picker.getByText(/^Columns \(/).click();
  await page.getByRole('button', { name: 'Show all' }).click();
  await picker.getByText(/^Columns \(/).click();

  const text = (await page.getByTestId('results-table').locator('tbody').textContent()) ?? '';
  expect(text).not.toMatch(/[{[]"/);
  // metrics.* as numbers with separators, as the API has them.
  const views = await columnValues(page, 'metrics.views');
  expect(views).toEqual(
    items.map((item) => {
      const v = (item.metrics as { views: number | null }).views;
      return v === null ? '—' : v.toLocaleString('en-US');
    }),
  );
  expect(views.some((v) => v.includes(','))).toBe(true);
  // Lists as comma-separated text.
  const hashtags = await columnValues(page, 'hashtags');
  const first = items.findIndex((item) => Array.isArray(item.hashtags) && item.hashtags.length > 1 && item.hashtags.length <= 6);
  expect(first).toBeGreaterThanOrEqual(0);
  expect(hashtags[first]).toBe((items[first].hashtags as string[]).join(', '));

  // Scrolled to its far right, the table still shows each row's username, at desktop and phone width.
  for (const viewport of [DESKTOP, PHONE]) {
    await page.setViewportSize(viewport);
    const wrap = page.locator('.results-wrap');
    const scrolled = await page.evaluate<number>(
      `(() => { const el = document.querySelector('.results-wrap'); el.scrollLeft = el.scrollWidth; return el.scrollLeft; })()`,
    );
    const box = (await wrap.boundingBox())!;
    expect(scrolled).toBeGreaterThan(200);
    for (const cell of [page.locator('thead th.col-username'), page.locator('tbody td.col-username').first()]) {
      const at = (await cell.boundingBox())!;
      expect(at.x).toBeGreaterThanOrEqual(box.x - 1);
      expect(at.x + at.width).toBeLessThanOrEqual(box.x + box.width + 1);
    }
    expect(await page.locator('tbody td.col-username').first().textContent()).toBe(items[0].username);
    // The page itself does not scroll sideways: the table does, inside its box.
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
  }
  await page.setViewportSize(DESKTOP);
  await page.evaluate(`document.querySelector('.results-wrap').scrollLeft = 0`);
  await check(page, 'job-posts-all-columns');
}, 120_000);

it('filters within the page shown', async () => {
  const page = await signedInPage();
  await openJob(page, bigJob);
  await waitForRange(page, 'Items 1–100 of 5,000');
  const usernames = await columnValues(page, 'username');
  const wanted = usernames[42];
  await page.getByLabel('Filter this page').fill(wanted.toUpperCase());
  await waitForRange(page, 'of this page match');
  const matching = await columnValues(page, 'username');
  expect(matching.length).toBeGreaterThanOrEqual(1);
  expect(matching).toContain(wanted);
  expect(matching.length).toBe(usernames.filter((u) => u.toLowerCase().includes(wanted.toLowerCase())).length);
  expect(await range(page).textContent()).toContain(`Items 1–100 of 5,000 · ${matching.length} of this page match`);
  await check(page, 'filter');

  // Only this page: a name of the next page matches nothing here.
  const nextPage = await apiItems(bigJob).then((items) => items.slice(100, 200).map((i) => i.username as string));
  const elsewhere = nextPage.find((name) => !usernames.some((u) => u.toLowerCase().includes(name.toLowerCase())))!;
  await page.getByLabel('Filter this page').fill(elsewhere);
  await page.getByText(`No item of this page matches “${elsewhere}”.`).waitFor();
  expect(await columnValues(page, 'username')).toEqual([]);
  await page.getByLabel('Filter this page').fill('');
  await waitForRange(page, 'Items 1–100 of 5,000');
  expect(await columnValues(page, 'username')).toEqual(usernames);
}, 120_000);

it('browses the results of a batch of 100 children, one chosen child at a time', async () => {
  const page = await signedInPage();
  await page.goto(`${base}/console/batches/${batchId}`);
  await page.getByRole('heading', { level: 1, name: `Batch ${batchId}` }).waitFor();
  const results = page.getByTestId('batch-results');
  await results.getByTestId('results-table').waitFor();
  const picker = page.getByLabel('Job of the batch');
  // Every completed child, in target order, with its item count.
  const options = (await picker.locator('option').allTextContents()).map((t) => t.trim());
  expect(options).toEqual(BATCH_TARGETS.map((target) => `${target} · 3 items`));
  expect(await results.getByTestId('results-range').textContent()).toContain('Items 1–3 of 3');

  const children = (
    await stack.api.get('/v1/jobs', { headers: user.read(), query: { batch_id: batchId, limit: 100, include_result: false } })
  ).body as Array<{ id: string; target: string }>;
  const fiftieth = children.find((c) => c.target === BATCH_TARGETS[49])!;
  await picker.selectOption({ label: `${BATCH_TARGETS[49]} · 3 items` });
  await results.getByRole('region', { name: `Result items of ${BATCH_TARGETS[49]}` }).waitFor();
  const ids = (await apiItems(fiftieth.id)).map((item) => item.id as string);
  await eventually(async () => JSON.stringify(await columnValues(page, 'id')) === JSON.stringify(ids), 10_000);
  await check(page, 'batch');
}, 120_000);

it('passes axe (WCAG 2.1 A and AA, no serious finding) on every page checked above, at desktop and phone width', () => {
  // Five pages, each at two widths.
  expect(checked.size).toBe(10);
  expect(violations).toEqual({});
});
