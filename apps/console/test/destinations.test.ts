import type { Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { listen, type LoopbackS3, startLoopbackS3, startTestStack, type TestStack } from '@sdx/testing';
import { heading, launchBrowser, newPageIn, seriousA11yViolations } from './browser';

/**
 * The console's Destinations page in a real browser against the real service and a loopback
 * S3 (an http endpoint on loopback, which only this stack allows): a destination whose bucket
 * refuses the check write shows the store's message and is not added; a good one is listed
 * (never its secret) and deleted after a confirmation.
 */
let stack: TestStack;
let s3: LoopbackS3;
let server: Server;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  s3 = await startLoopbackS3(['console-bucket']);
  stack = await startTestStack({ env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' } });
  ({ url: base, server } = await listen(stack.app));
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
  await s3?.stop();
});

async function signUpInBrowser(page: Page): Promise<void> {
  await page.goto(`${base}/console/signup`);
  await page.getByLabel('Email').fill(`dest.${Date.now().toString(36)}@example.com`);
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
  await page.getByRole('button', { name: 'Create account' }).click();
  await heading(page, 'Overview');
}

async function fill(page: Page, bucket: string): Promise<void> {
  await page.getByLabel('Name').fill('Warehouse');
  await page.getByLabel('Bucket').fill(bucket);
  await page.getByLabel('Prefix (optional)').fill('sdx/');
  await page.getByLabel('Endpoint (optional)').fill(s3.endpoint);
  await page.getByLabel('Path-style addressing').check();
  await page.getByLabel('Format').selectOption('csv');
  await page.getByLabel('Access key ID').fill(s3.accessKeyId);
  await page.getByLabel('Secret access key').fill(s3.secretAccessKey);
}

describe('console: destinations', () => {
  it('shows the check write’s refusal, adds a destination without showing its secret, and deletes it', async () => {
    const page = await newPageIn(browser, contexts);
    await signUpInBrowser(page);
    await page.getByRole('link', { name: 'Destinations' }).click();
    await heading(page, 'Destinations');

    await fill(page, 'no-such-bucket');
    await page.getByRole('button', { name: 'Add destination' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/The destination could not be written to: .*bucket does not exist/i);
    expect(await alert.textContent()).toContain('destination_unreachable');

    await page.getByLabel('Bucket').fill('console-bucket');
    await page.getByRole('button', { name: 'Add destination' }).click();
    const row = page.getByTestId('destinations-table').locator('tbody tr').filter({ hasText: 'Warehouse' });
    await row.waitFor();
    expect(await row.textContent()).toContain('console-bucket/sdx/');
    expect(await row.textContent()).toContain('csv');
    expect(await page.getByRole('alert').count()).toBe(0);
    // The secret is sent once: the form forgets it.
    expect(await page.getByLabel('Secret access key').inputValue()).toBe('');
    expect(await seriousA11yViolations(page)).toEqual([]);

    await row.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No destination yet.').waitFor();
    const rows = await stack.runtime.db.selectFrom('destinations').select('id').execute();
    expect(rows).toEqual([]);
  });
});
