import type { Server } from 'node:http';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type FakeStripe, startFakeStripe } from '@sdx/fake-stripe';
import { eventually, listen, signUpUser, startTestStack, type SessionUser, type TestStack } from '@sdx/testing';
import {
  type AxeViolation,
  DESKTOP,
  launchBrowser,
  PHONE,
  seriousA11yViolations,
  visibleButtons,
  heading,
  newPageIn,
  screenshot,
} from './browser';

/**
 * The console's Billing page (extensions-2.md 1) in a real browser against the real service and
 * the fake Stripe: a pack bought through the fake's hosted Checkout page, the credits arriving
 * with Stripe's signed webhook, the saved card, the spend caps of the workspace and of a key,
 * the low-credits warning of the overview, and what a viewer sees. Each step's screenshot goes
 * to docs/console/billing/ (with SCREENSHOTS=1), and each step's page passes axe at desktop and phone width.
 */
let stripe: FakeStripe;
let stack: TestStack;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];
const SHOTS = path.resolve(__dirname, '..', '..', '..', 'docs', 'console', 'billing');
const violations: Record<string, AxeViolation[] | string> = {};

beforeAll(async () => {
  stripe = await startFakeStripe();
  // The stack listens on loopback and points the fake's webhooks at itself; the browser uses the same origin.
  stack = await startTestStack({ stripe });
  base = stack.url!;
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await stack?.close();
  await stripe?.close();
});

const PASSWORD = 'correct horse battery';

const newPage = () => newPageIn(browser, contexts);

async function signIn(page: Page, user: SessionUser, workspaceId: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await heading(page, 'Overview');
  await page.getByLabel('Workspace').selectOption(workspaceId);
  await heading(page, 'Overview');
}

async function openBilling(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Billing' }).click();
  await heading(page, 'Billing');
  await page.getByTestId('packs').waitFor();
}

/** A step of the flow: axe at desktop and phone width (and no sideways scrolling on the phone), and its screenshots for the docs. */
async function step(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('networkidle');
  const desktop = await seriousA11yViolations(page);
  if (desktop.length > 0) violations[`${name} (desktop)`] = desktop;
  await screenshot(page, path.join(SHOTS, `${name}.png`));
  await page.setViewportSize(PHONE);
  await screenshot(page, path.join(SHOTS, `${name}-phone.png`));
  const phone = await seriousA11yViolations(page);
  if (phone.length > 0) violations[`${name} (phone)`] = phone;
  const width = await page.evaluate<number>('document.documentElement.scrollWidth');
  if (width > PHONE.width) violations[`${name} (phone)`] = `the page is ${width} px wide on a ${PHONE.width} px screen`;
  await page.setViewportSize(DESKTOP);
}

describe('the Billing page', () => {
  let owner: SessionUser;
  let viewer: SessionUser;
  let teamId: string;
  let ownerPage: Page;

  beforeAll(async () => {
    owner = await signUpUser(stack, { password: PASSWORD, displayName: 'Olive Owner' });
    // A team workspace starts without credits (NEW_TEAM_WORKSPACE_CREDITS 0): what it has, it buys.
    const team = await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name: 'Acme billing' } });
    teamId = team.body.id;
    const key = await stack.api.post('/v1/keys', { headers: owner.write(teamId), body: { name: 'warehouse sync', role: 'member' } });
    expect(key.status).toBe(201);
    viewer = await signUpUser(stack, { password: PASSWORD, displayName: 'Vic Viewer' });
    const invited = await stack.api.post(`/v1/workspaces/${teamId}/invitations`, {
      headers: owner.write(teamId),
      body: { email: viewer.email, role: 'viewer' },
    });
    await stack.api.post('/v1/invitations/accept', { headers: viewer.write(), body: { token: invited.body.token } });
  }, 60_000);

  it('buys a pack through Stripe’s checkout page: back on Billing, the 10,000 credits arrive, the payment is paid and the card is saved', async () => {
    ownerPage = await newPage();
    const page = ownerPage;
    await signIn(page, owner, teamId);
    await openBilling(page);
    const pack = page.getByTestId('pack-pack_10k');
    expect(await pack.textContent()).toContain('10,000 credits');
    expect(await pack.textContent()).toContain('$10.00');
    expect(await page.getByTestId('pack-pack_100k').textContent()).toContain('$90.00');
    await page.getByTestId('available-credits').filter({ hasText: /^0$/ }).waitFor();
    expect(await page.getByTestId('saved-card').textContent()).toContain('No saved card — buy a pack once to save one');
    expect(await page.getByTestId('payments-table').textContent()).toContain('No payment yet');
    await step(page, '01-billing-before-buying');

    await pack.getByRole('button', { name: 'Buy 10,000 credits' }).click();
    await page.waitForURL((url) => url.toString().startsWith(`${stripe.url}/checkout/`));
    await page.getByRole('button', { name: 'Pay $10.00' }).waitFor();
    await screenshot(page, path.join(SHOTS, '02-stripe-checkout.png'));
    await page.getByRole('button', { name: 'Pay $10.00' }).click();

    // Stripe sends the buyer back to the Billing page of the workspace that bought.
    await page.waitForURL(`${base}/console/w/${teamId}/billing?checkout=success`);
    await heading(page, 'Billing');
    expect(await page.getByTestId('checkout-notice').textContent()).toContain(
      'Payment received — credits appear as soon as Stripe confirms it',
    );
    // The credits come with Stripe's webhook, which the page waits for by reading them again.
    await page
      .getByTestId('purchased-credits')
      .filter({ hasText: /^10,000$/ })
      .waitFor({ timeout: 30_000 });
    await page
      .getByTestId('available-credits')
      .filter({ hasText: /^10,000$/ })
      .waitFor();
    await page
      .getByTestId('payment-status')
      .filter({ hasText: /^paid$/ })
      .waitFor();
    const payment = page.getByTestId('payments-table').locator('tbody tr').first();
    // The payment names its pack, not the pack's ID; the banner stops checking once it is paid.
    expect(await payment.textContent()).toMatch(/Checkout.*10,000 credits pack.*10,000.*\$10\.00.*paid/);
    expect(await payment.textContent()).not.toContain('pack_10k');
    await page.getByTestId('checkout-notice').filter({ hasNotText: 'Checking for them' }).waitFor({ timeout: 10_000 });
    await page.getByTestId('saved-card').filter({ hasText: 'Visa •••• 4242' }).waitFor();
    await step(page, '03-billing-after-buying');

    const account = await stack.api.get('/v1/account', { headers: owner.read(teamId) });
    expect(account.body.credits).toMatchObject({ purchased_credits: 10_000, lifetime_purchased: 10_000 });
  }, 90_000);

  it('sets a key’s monthly cap, the workspace’s cap and the low-credits alert, which a reload shows again', async () => {
    const page = ownerPage;
    await page.goto(`${base}/console/billing`);
    await heading(page, 'Billing');
    const keyCap = page.getByLabel('Monthly cap of warehouse sync (empty: no cap)');
    await keyCap.fill('5000');
    await page.getByRole('button', { name: 'Save the cap of warehouse sync' }).click();
    await page.getByTestId('key-caps').getByRole('status').filter({ hasText: 'Saved' }).waitFor();

    await page.getByLabel('Monthly credit cap').fill('50000');
    await page.getByLabel('Low-credits alert below').fill('20000');
    await page.getByRole('button', { name: 'Save limits' }).click();
    await page.getByRole('status').filter({ hasText: 'Limits saved.' }).waitFor();
    await page.getByTestId('month-spend').filter({ hasText: 'of the cap of 50,000' }).waitFor();

    await page.reload();
    await heading(page, 'Billing');
    await page.getByTestId('key-caps').waitFor();
    expect(await page.getByLabel('Monthly cap of warehouse sync (empty: no cap)').inputValue()).toBe('5000');
    expect(await page.getByLabel('Monthly credit cap').inputValue()).toBe('50000');
    expect(await page.getByLabel('Low-credits alert below').inputValue()).toBe('20000');
    expect(await page.locator('[data-testid="month-spend"] meter').count()).toBe(1);
    // 10,000 available is below the alert at 20,000: the page says so too.
    await page.getByTestId('low-credits').filter({ hasText: 'Credits are running low' }).waitFor();
    await step(page, '04-caps-set');

    const keys = await stack.api.get('/v1/keys', { headers: owner.read(teamId) });
    expect(keys.body.find((k: { name: string }) => k.name === 'warehouse sync')).toMatchObject({
      monthly_credit_cap: 5000,
      month_spent_credits: 0,
    });
    const billing = await stack.api.get('/v1/billing', { headers: owner.read(teamId) });
    expect(billing.body.limits).toEqual({ monthly_credit_cap: 50_000, low_credits_threshold: 20_000 });

    // Emptied, the key's cap is none again.
    await page.getByLabel('Monthly cap of warehouse sync (empty: no cap)').fill('');
    await page.getByRole('button', { name: 'Save the cap of warehouse sync' }).click();
    await eventually(
      async () =>
        (await stack.api.get('/v1/keys', { headers: owner.read(teamId) })).body.find((k: { name: string }) => k.name === 'warehouse sync')
          .monthly_credit_cap === null,
      10_000,
    );
    await page.getByLabel('Monthly cap of warehouse sync (empty: no cap)').fill('5000');
    await page.getByRole('button', { name: 'Save the cap of warehouse sync' }).click();
    await page.getByTestId('key-caps').getByRole('status').filter({ hasText: 'Saved' }).waitFor();
  }, 60_000);

  it('turns auto-recharge on with the saved card', async () => {
    const page = ownerPage;
    await page.goto(`${base}/console/billing`);
    await heading(page, 'Billing');
    await page.getByTestId('saved-card').filter({ hasText: 'Visa •••• 4242' }).waitFor();
    await page.getByLabel('Recharge automatically').check();
    await page.getByLabel('When available credits fall below').fill('2000');
    await page.getByLabel('Buy', { exact: true }).selectOption('pack_10k');
    await page.getByRole('button', { name: 'Save auto-recharge' }).click();
    await page.getByRole('status').filter({ hasText: 'Auto-recharge saved: on.' }).waitFor();
    const billing = await stack.api.get('/v1/billing', { headers: owner.read(teamId) });
    expect(billing.body.auto_recharge).toMatchObject({
      enabled: true,
      threshold_credits: 2000,
      pack_id: 'pack_10k',
      payment_method: { brand: 'visa', last4: '4242' },
    });
    await page.reload();
    await heading(page, 'Billing');
    expect(await page.getByLabel('Recharge automatically').isChecked()).toBe(true);
    expect(await page.getByLabel('When available credits fall below').inputValue()).toBe('2000');
  });

  it('warns on the overview when the available credits are below the low-credits threshold, with a way to buy', async () => {
    const page = ownerPage;
    await page.goto(`${base}/console/`);
    await heading(page, 'Overview');
    const warning = page.getByTestId('low-credits');
    await warning.waitFor();
    // The figure counts the purchased credits once (the usage's credits_remaining holds every source).
    expect(await page.getByTestId('credits-left').textContent()).toBe('10,000');
    expect(await warning.textContent()).toContain("10,000 available, below this workspace's alert threshold of 20,000");
    await step(page, '05-overview-low-credits');
    await warning.getByRole('link', { name: 'Buy credits' }).click();
    await heading(page, 'Billing');
  });

  it('says so when checkout was cancelled', async () => {
    const page = ownerPage;
    await page.goto(`${base}/console/billing?checkout=cancelled`);
    await heading(page, 'Billing');
    expect(await page.getByTestId('checkout-notice').textContent()).toContain('Checkout cancelled: nothing was charged.');
  });

  it('shows a viewer the packs, caps and credits read-only: no Buy, no payments, no form', async () => {
    const page = await newPage();
    await signIn(page, viewer, teamId);
    const warning = page.getByTestId('low-credits');
    await warning.waitFor();
    expect(await warning.getByRole('link', { name: 'Buy credits' }).count()).toBe(0);
    expect(await warning.getByRole('link', { name: 'Billing' }).count()).toBe(1);

    await openBilling(page);
    await page.getByTestId('key-caps').waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('button', { name: /^Buy/ }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Payments' }).count()).toBe(0);
    expect(await visibleButtons(page)).toEqual([]);
    expect(await page.locator('main form, main input, main td select').count()).toBe(0);
    expect(await page.getByTestId('purchased-credits').textContent()).toBe('10,000');
    expect(await page.getByTestId('limits').textContent()).toContain('50,000');
    expect(await page.getByTestId('key-caps').textContent()).toContain('5,000');
    expect(await page.getByTestId('saved-card').textContent()).toContain('Visa •••• 4242');
    await step(page, '06-billing-as-viewer');
  });

  it('pages through the payments with "Load more", and shows what a refund reversed', async () => {
    // 21 checkouts started and left: pending payments, newer than the paid one.
    for (let i = 0; i < 21; i++) {
      const started = await stack.api.post('/v1/billing/checkout', { headers: owner.write(teamId), body: { pack_id: 'pack_10k' } });
      expect(started.status).toBe(201);
    }
    // Half of the paid checkout refunded in Stripe: 5,000 credits reversed.
    const paid = stripe.events.find((e) => e.type === 'checkout.session.completed')!;
    await stripe.refund(String(paid.data.object.payment_intent), 500);
    await eventually(
      async () => (await stack.api.get('/v1/account', { headers: owner.read(teamId) })).body.credits.purchased_credits === 5000,
      15_000,
    );

    const page = ownerPage;
    await page.goto(`${base}/console/billing`);
    await heading(page, 'Billing');
    const rows = page.getByTestId('payments-table').locator('tbody tr');
    await eventually(async () => (await rows.count()) === 20, 10_000);
    const [more] = await Promise.all([
      page.waitForRequest(
        (r) => new URL(r.url()).pathname === '/v1/billing/payments' && new URL(r.url()).searchParams.has('starting_after'),
      ),
      page.getByRole('button', { name: 'Load more' }).click(),
    ]);
    expect(new URL(more.url()).searchParams.get('starting_after')).toMatch(/^pay_/);
    await eventually(async () => (await rows.count()) === 22, 10_000);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    const refunded = rows.last();
    expect(await refunded.textContent()).toMatch(/partially refunded.*5,000 credits reversed/);
    expect(await rows.first().getByTestId('payment-status').textContent()).toBe('pending');
    await page
      .getByTestId('purchased-credits')
      .filter({ hasText: /^5,000$/ })
      .waitFor();
  }, 60_000);

  it('says inline that auto-recharge needs a saved card, in a workspace that never bought', async () => {
    const newcomer = await signUpUser(stack, { password: PASSWORD });
    const page = await newPage();
    await signIn(page, newcomer, newcomer.personalWorkspaceId);
    await openBilling(page);
    expect(await page.getByTestId('saved-card').textContent()).toContain('No saved card — buy a pack once to save one');
    await page.getByLabel('Recharge automatically').check();
    await page.getByLabel('When available credits fall below').fill('1000');
    await page.getByRole('button', { name: 'Save auto-recharge' }).click();
    await page.getByTestId('payment-method-required').filter({ hasText: 'Auto-recharge needs a saved card' }).waitFor();
    const billing = await stack.api.get('/v1/billing', { headers: newcomer.read(newcomer.personalWorkspaceId) });
    expect(billing.body.auto_recharge.enabled).toBe(false);
  });

  it('moves the workspace free → starter → pro → starter → cancelled, each change confirmed with its cost, with invoices and Manage billing', async () => {
    const plansOwner = await signUpUser(stack, { password: PASSWORD, displayName: 'Paula Plans' });
    const team = await stack.api.post('/v1/workspaces', { headers: plansOwner.write(), body: { name: 'Acme plans' } });
    const wsId = team.body.id as string;
    const page = await newPage();
    await signIn(page, plansOwner, wsId);
    await openBilling(page);
    await page.getByTestId('plan-free').filter({ hasText: 'Current plan' }).waitFor();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    await page.getByTestId('plan-starter').getByRole('button', { name: 'Subscribe to Starter' }).click();
    expect(dialogs.at(-1)).toMatch(/Subscribe to Starter: \$49\.00 a month for 50,000 credits a month, charged now/);
    await page.waitForURL((url) => url.toString().startsWith(`${stripe.url}/checkout/`));
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.waitForURL(`${base}/console/w/${wsId}/billing?subscription=success`);
    await page.getByTestId('plan-starter').filter({ hasText: 'Current plan' }).waitFor({ timeout: 30_000 });
    await page.getByTestId('invoices-table').locator('tbody tr').filter({ hasText: '$49.00' }).waitFor();
    await step(page, '07-plans-starter');

    await page.getByTestId('plan-pro').getByRole('button', { name: 'Change to Pro' }).click();
    expect(dialogs.at(-1)).toMatch(/Upgrade to Pro \(\$199\.00 a month\): the difference for the rest of this period is charged now/);
    await page.reload();
    await page.getByTestId('plan-pro').filter({ hasText: 'Current plan' }).waitFor({ timeout: 30_000 });
    await page.getByTestId('plan-starter').getByRole('button', { name: 'Change to Starter' }).click();
    expect(dialogs.at(-1)).toMatch(/Change to Starter \(\$49\.00 a month\) from .*: nothing is charged or refunded now/);
    await page.getByTestId('subscription-state').filter({ hasText: 'changes to Starter then' }).waitFor();
    await step(page, '08-plans-downgrade-scheduled');

    await page.getByRole('button', { name: 'Cancel subscription' }).click();
    expect(dialogs.at(-1)).toMatch(/Cancel the subscription: Pro stays until .*, then the workspace is on the free plan/);
    await page.getByTestId('subscription-state').filter({ hasText: 'ends' }).waitFor();
    const account = await stack.api.get('/v1/account', { headers: plansOwner.read(wsId) });
    expect(account.body.monthly_quota).toBe(300_000);

    await page.getByRole('button', { name: 'Manage billing' }).click();
    await page.waitForURL((url) => url.toString().startsWith(`${stripe.url}/portal/`));
    await page.getByRole('heading', { name: 'Billing portal' }).waitFor();
  }, 120_000);

  it('passes axe at every step', () => {
    expect(violations).toEqual({});
  });
});

describe('the Billing page without Stripe configured', () => {
  let bare: TestStack;
  let bareServer: Server;
  let bareBase: string;

  beforeAll(async () => {
    bare = await startTestStack();
    ({ url: bareBase, server: bareServer } = await listen(bare.app));
  }, 60_000);

  afterAll(async () => {
    await new Promise((resolve) => bareServer?.close(resolve));
    await bare?.close();
  });

  it('knows payments are off before any click: Buy, plans and auto-recharge disabled, and how to turn billing on locally', async () => {
    const owner = await signUpUser(bare, { password: PASSWORD });
    const page = await newPage();
    await page.goto(`${bareBase}/console/`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Overview');
    await openBilling(page);
    const notice = page.getByTestId('billing-unavailable').filter({ hasText: 'Payments are not configured on this service' });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('npm run stripe:fake');
    const buy = page.getByTestId('pack-pack_10k').getByRole('button', { name: 'Buy 10,000 credits' });
    expect(await buy.isDisabled()).toBe(true);
    expect(await page.getByTestId('plan-starter').getByRole('button', { name: 'Subscribe to Starter' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Manage billing' }).isDisabled()).toBe(true);
    // Auto-recharge is shown, not offered: there is no form to save.
    expect(await page.getByRole('button', { name: 'Save auto-recharge' }).count()).toBe(0);
    expect(new URL(page.url()).pathname).toMatch(/^\/console\/w\/ws_[^/]+\/billing$/);
    // The limits work without Stripe.
    await page.getByLabel('Monthly credit cap').fill('1000');
    await page.getByRole('button', { name: 'Save limits' }).click();
    await page.getByRole('status').filter({ hasText: 'Limits saved.' }).waitFor();
  });
});
