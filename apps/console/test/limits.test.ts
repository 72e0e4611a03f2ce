import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Client, operationLimits, type Platform } from '@sdx/sdk';
import { listen, signUpUser, startTestStack, type TestStack } from '@sdx/testing';
import { sdx } from '../../cli/test/support';
import { launchBrowser } from './browser';

/**
 * Limits in one place (issue 39, item 4): for every operation of GET /v1/platforms, the default
 * and the maximum `limit` the console's forms show, the CLI's `sdx platforms` lists and the SDK's
 * `operationLimits` gives are the API's `default_limit` and `max_results`; and when --limit is
 * left out, the CLI says which default applies, which is the one the service applies.
 */
let stack: TestStack;
let server: Server;
let base: string;
let browser: Browser;
let context: BrowserContext | undefined;
let platforms: Platform[];
let operations: Array<{ platform: string; operation: string; default_limit: number; max_results: number }>;
let home: string;

beforeAll(async () => {
  stack = await startTestStack();
  ({ url: base, server } = await listen(stack.app));
  browser = await launchBrowser();
  const listed = await stack.api.get('/v1/platforms');
  expect(listed.status).toBe(200);
  platforms = listed.body as Platform[];
  operations = platforms.flatMap((p) =>
    p.operations.map((o) => ({ platform: p.platform, operation: o.operation, default_limit: o.default_limit, max_results: o.max_results })),
  );
  home = mkdtempSync(path.join(tmpdir(), 'sdx-limits-'));
}, 60_000);

afterAll(async () => {
  await context?.close().catch(() => undefined);
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
  rmSync(home, { recursive: true, force: true });
});

/** "25,000" as the clients print numbers (one format, with separators). */
const shown = (n: number) => new Intl.NumberFormat('en-US').format(n);

it('lists operations whose defaults differ, so the comparison below can tell them apart', () => {
  expect(operations.length).toBeGreaterThan(10);
  expect(new Set(operations.map((o) => o.default_limit)).size).toBeGreaterThan(1);
  expect(operations.some((o) => o.default_limit < o.max_results)).toBe(true);
});

it('the SDK gives every operation’s default and maximum as GET /v1/platforms does', async () => {
  for (const o of operations) {
    expect(operationLimits(platforms, o.platform, o.operation)).toEqual({
      platform: o.platform,
      operation: o.operation,
      defaultLimit: o.default_limit,
      maxResults: o.max_results,
    });
  }
  expect(operationLimits(platforms, 'twitter', 'no_such_operation')).toBeNull();
  const client = new Client({ baseUrl: base });
  expect(await client.platforms.limits('twitter', 'followers')).toEqual({
    platform: 'twitter',
    operation: 'followers',
    defaultLimit: 12,
    maxResults: 25_000,
  });
  expect(await client.platforms.limits('nowhere', 'followers')).toBeNull();
});

it('the CLI lists every operation’s default and maximum, says which default applies when --limit is left out, and the service applies it', async () => {
  const table = await sdx(['platforms'], { env: { SDX_BASE_URL: base } });
  expect(table.code).toBe(0);
  const rows = table.stdout.trim().split('\n');
  expect(rows[0]).toMatch(/^PLATFORM +OPERATION +DEFAULT +MAX +PRICE$/);
  const listed = rows.slice(1).map((line) => {
    const [platform, operation, defaultLimit, max] = line.trim().split(/\s+/);
    return { platform, operation, default_limit: defaultLimit, max_results: max };
  });
  expect(listed).toEqual(
    operations.map((o) => ({
      platform: o.platform,
      operation: o.operation,
      default_limit: shown(o.default_limit),
      max_results: shown(o.max_results),
    })),
  );

  const help = await sdx(['jobs', 'create', '--help']);
  expect(help.stdout.replace(/\s+/g, ' ')).toContain(
    "default: the operation's own default; at most its maximum; `sdx platforms` lists both",
  );

  const ws = await stack.workspace({ credits: 100_000 });
  const env = { SDX_BASE_URL: base, SDX_API_KEY: ws.apiKey, XDG_CONFIG_HOME: path.join(home, 'config') };
  const said = (o: { platform: string; operation: string }) => {
    const { default_limit: d, max_results: m } = operations.find((x) => x.platform === o.platform && x.operation === o.operation)!;
    return `no --limit: ${o.platform} ${o.operation} takes its default of ${shown(d)} results per target (at most ${shown(m)}, with --limit N)`;
  };
  const targets = path.join(home, 'targets.txt');
  writeFileSync(targets, 'natgeo\nnasa\n');
  const [quote, job, batch, schedule, quoted, given] = await Promise.all([
    sdx(['quote', 'twitter', 'followers', 'nasa'], { env }),
    sdx(['jobs', 'create', 'instagram', 'profile', 'natgeo'], { env }),
    sdx(['batches', 'create', 'instagram', 'posts', '--targets-file', targets], { env }),
    sdx(
      [
        'schedules',
        'create',
        'youtube',
        'playlist_items',
        '--name',
        'Weekly',
        '--target',
        'PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG',
        '--frequency',
        'weekly',
        '--timezone',
        'UTC',
        '--starts-at',
        '2030-01-07T08:00:00Z',
      ],
      { env },
    ),
    sdx(['quote', 'twitter', 'followers', 'nasa', '--json'], { env }),
    sdx(['quote', 'twitter', 'followers', 'nasa', '--limit', '300'], { env }),
  ]);
  for (const [ran, recipe] of [
    [quote, { platform: 'twitter', operation: 'followers' }],
    [job, { platform: 'instagram', operation: 'profile' }],
    [batch, { platform: 'instagram', operation: 'posts' }],
    [schedule, { platform: 'youtube', operation: 'playlist_items' }],
  ] as const) {
    expect({ recipe, code: ran.code, stderr: ran.stderr.trim() }).toEqual({ recipe, code: 0, stderr: said(recipe) });
  }
  // What the CLI said is what the service applied.
  expect(quote.stdout).toMatch(/limit per target +12\n/);
  expect(job.stdout).toMatch(/limit +1\n/);
  expect(batch.stdout).toMatch(/limit +12\n/);
  expect(schedule.stdout).toMatch(/limit +12\n/);
  // --json keeps stderr for errors; a given --limit needs no word.
  expect(quoted.stderr).toBe('');
  expect(JSON.parse(quoted.stdout)).toMatchObject({ requested_limit: 12 });
  expect(given.stderr).toBe('');
}, 120_000);

it('the console’s forms default to every operation’s default and say its maximum', async () => {
  const user = await signUpUser(stack, { password: 'correct horse battery' });
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page: Page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${base}/console/`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

  const read = async () => ({
    value: await page.getByLabel('Results per target').inputValue(),
    hint: await page.getByTestId('limit-hint').textContent(),
  });
  const expected = (o: (typeof operations)[number]) => ({
    value: String(o.default_limit),
    hint: `Default ${shown(o.default_limit)}; at most ${shown(o.max_results)}.`,
  });

  await page.goto(`${base}/console/jobs/new`);
  await page.getByRole('heading', { level: 1, name: 'New job' }).waitFor();
  // Before anything is chosen: the first operation's own default.
  await page.getByTestId('limit-hint').waitFor();
  expect(await read()).toEqual(expected(operations[0]));
  const seen: Record<string, unknown> = {};
  const wanted: Record<string, unknown> = {};
  for (const o of operations) {
    await page.getByLabel('Platform').selectOption(o.platform);
    await page.getByLabel('Operation').selectOption(o.operation);
    // Another operation puts its own default back, whatever was typed before.
    await page.getByLabel('Results per target').fill('7');
    const other = operations.find((x) => x.platform === o.platform && x.operation !== o.operation);
    if (other) {
      await page.getByLabel('Operation').selectOption(other.operation);
      await page.getByLabel('Operation').selectOption(o.operation);
    }
    seen[`${o.platform} ${o.operation}`] = await read();
    wanted[`${o.platform} ${o.operation}`] = expected(o);
  }
  expect(seen).toEqual(wanted);

  // The schedule form shares the fields: a new schedule starts at its operation's default too.
  await page.goto(`${base}/console/schedules/new`);
  await page.getByRole('heading', { level: 1, name: 'New schedule' }).waitFor();
  await page.getByLabel('Platform').selectOption('twitter');
  await page.getByLabel('Operation').selectOption('followers');
  expect(await read()).toEqual(expected(operations.find((o) => o.platform === 'twitter' && o.operation === 'followers')!));

  // Over the maximum: the form says so in its own words, and sends nothing.
  const max = operations.find((o) => o.platform === 'twitter' && o.operation === 'followers')!.max_results;
  const sent: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && /\/v1\/(jobs|batches|quotes)$/.test(new URL(request.url()).pathname))
      sent.push(new URL(request.url()).pathname);
  });
  await page.goto(`${base}/console/jobs/new`);
  await page.getByRole('heading', { level: 1, name: 'New job' }).waitFor();
  await page.getByTestId('limit-hint').waitFor();
  await page.getByLabel('Platform').selectOption('twitter');
  await page.getByLabel('Operation').selectOption('followers');
  await page.getByLabel('Target', { exact: true }).fill('nasa');
  await page.getByLabel('Results per target').fill(String(max + 5_000));
  await page.getByText(`At most ${shown(max)} results per target for this operation; you entered ${shown(max + 5_000)}.`).waitFor();
  expect(await page.getByLabel('Results per target').getAttribute('aria-invalid')).toBe('true');
  expect(await page.getByRole('button', { name: 'Start job' }).isDisabled()).toBe(true);
  await page.waitForTimeout(1_000);
  expect(sent).toEqual([]);
  expect(await page.getByText('less than or equal').count()).toBe(0);

  // A batch: duplicates found as the service reads targets, and the batch says it re-extracts.
  await page.goto(`${base}/console/batches/new`);
  await page.getByRole('heading', { level: 1, name: 'New batch' }).waitFor();
  await page.getByTestId('limit-hint').waitFor();
  await page.getByLabel('Platform').selectOption('instagram');
  await page.getByLabel('Operation').selectOption('profile');
  await page.getByLabel('Targets, one per line').fill('nasa\nhttps://www.instagram.com/nasa/\nnatgeo');
  await page.getByText('Duplicated: https://www.instagram.com/nasa/ (the same as nasa).').waitFor();
  expect(await page.getByRole('button', { name: /Start batch/ }).isDisabled()).toBe(true);
  expect(await page.getByTestId('batch-reextracts').textContent()).toContain('A batch extracts every target afresh and bills it');
}, 180_000);
