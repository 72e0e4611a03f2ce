import { createHmac } from 'node:crypto';
import type { Server } from 'node:http';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { listen, startTestStack, startWebhookReceiver, type TestStack } from '@sdx/testing';
import { launchBrowser, heading, newPageIn } from './browser';

/**
 * The console's webhook pages in a real browser against the real service, with a stack of its
 * own: its receiver listens on loopback over http, which only this stack allows.
 */
let stack: TestStack;
let server: Server;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  stack = await startTestStack({ withWorker: true, env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' } });
  ({ url: base, server } = await listen(stack.app));
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
});

const newPage = () => newPageIn(browser, contexts);

async function signUpInBrowser(page: Page): Promise<void> {
  await page.goto(`${base}/console/signup`);
  await page.getByLabel('Email').fill(`hooks.${Date.now().toString(36)}@example.com`);
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
  await page.getByRole('button', { name: 'Create account' }).click();
  await heading(page, 'Overview');
}

describe('console: webhooks', () => {
  it('registers a webhook, shows its secret once, and sees a test delivery arrive at the receiver and in the delivery log', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const page = await newPage();
      await signUpInBrowser(page);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await heading(page, 'Webhooks');
      await page.getByLabel('URL').fill(receiver.url);
      await page.getByLabel('Description (optional)').fill('warehouse');
      await page.getByRole('button', { name: 'Add webhook' }).click();
      const shown = page.getByTestId('secret-once');
      await shown.waitFor();
      const secret = (await page.getByTestId('secret-value').textContent())!;
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);
      expect(await shown.textContent()).toContain('This is the only time it is shown');
      expect(await shown.textContent()).toContain('the service keeps it to sign deliveries');
      expect(await shown.textContent()).not.toContain('only a hash is kept');
      await page.getByRole('button', { name: 'I have stored it' }).click();
      await heading(page, 'Webhook');
      await page.reload();
      await heading(page, 'Webhook');
      expect(await page.content()).not.toContain(secret);

      await page.getByRole('button', { name: 'Send a test event' }).click();
      const [message] = await receiver.received(1, 15_000);
      expect(JSON.parse(message.body).type).toBe('webhook.test');
      // Signed with the secret the console showed (Standard Webhooks: HMAC-SHA256 of id.timestamp.body).
      const signed = `${message.headers['webhook-id']}.${message.headers['webhook-timestamp']}.${message.body}`;
      const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
        .update(signed)
        .digest('base64');
      expect(message.headers['webhook-signature'].split(' ')).toContain(`v1,${expected}`);
      await page
        .getByTestId('deliveries-table')
        .locator('tbody tr')
        .filter({ hasText: 'webhook.test' })
        .filter({ hasText: 'succeeded' })
        .waitFor();
    } finally {
      await receiver.close();
    }
  });
});
