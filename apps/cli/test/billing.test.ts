import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type FakeStripe, startFakeStripe } from '@sdx/fake-stripe';
import { eventually, type ServedStack, startServedStack, startTestStack, type TestStack } from '@sdx/testing';
import { json, sdx, useBuiltSdx } from './support';

/**
 * `sdx billing …` as a child process against the real service and the fake Stripe: the plans with
 * the current one marked, subscribing (the Checkout URL), the plan once the fake Checkout is paid,
 * an upgrade, the invoices with their hosted URLs, the portal, cancelling; an unknown plan and a
 * service without payments as non-zero exits with the API's message.
 */

const PLANS = JSON.stringify([
  { id: 'free', name: 'Free', monthly_credits: 1000, amount: 0, currency: 'usd' },
  { id: 'starter', name: 'Starter', monthly_credits: 50000, amount: 4900, currency: 'usd' },
  { id: 'pro', name: 'Pro', monthly_credits: 300000, amount: 19900, currency: 'usd' },
]);

let fake: FakeStripe;
let stack: TestStack;
let unpaid: ServedStack;
let home: string;
beforeAll(async () => {
  fake = await startFakeStripe({ retryDelaysMs: [100, 300] });
  stack = await startTestStack({ stripe: fake, env: { APP_URL: 'http://console.test', PLANS } });
  unpaid = await startServedStack({ env: { APP_URL: 'http://console.test', PLANS } });
  home = mkdtempSync(path.join(tmpdir(), 'sdx-cli-billing-'));
  await useBuiltSdx();
});
afterAll(async () => {
  await stack?.close();
  await unpaid?.close();
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

async function envFor(target: TestStack, url: string): Promise<Record<string, string>> {
  const ws = await target.workspace({ credits: 1000 });
  return { SDX_BASE_URL: url, SDX_API_KEY: ws.apiKey, XDG_CONFIG_HOME: path.join(home, 'config') };
}

/** The current plan's row of `sdx billing plans`: the one marked `*`. */
function marked(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('*'))
    .map((line) => line.split(/\s+/)[1]);
}

it('subscribes through Checkout, shows the plan once paid, upgrades, lists invoices, opens the portal and cancels', async () => {
  const env = await envFor(stack, stack.url!);
  const auth = { Authorization: `Bearer ${env.SDX_API_KEY}` };
  /** The plan in force, read from the API (cheaper than a process per poll). */
  const planNow = async () => (await stack.api.get('/v1/billing', { headers: auth })).body.plan.id as string;

  const [plans, view] = await Promise.all([sdx(['billing', 'plans'], { env }), sdx(['billing', 'plans', '--json'], { env })]);
  expect(plans.code).toBe(0);
  const lines = plans.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^ +PLAN +NAME +CREDITS\/MONTH +PRICE\/MONTH$/);
  expect(lines.slice(1).map((l) => l.replace(/\s+/g, ' ').trim())).toEqual([
    '* free Free 1,000 $0.00',
    'starter Starter 50,000 $49.00',
    'pro Pro 300,000 $199.00',
  ]);
  expect(plans.stderr).toBe('');
  expect(json(view)).toMatchObject({ payments_enabled: true, plan: { id: 'free' }, subscription: null });

  // Subscribe: the Checkout URL to pay at; nothing changes before it is paid.
  const started = await sdx(['billing', 'subscribe', 'starter'], { env });
  expect(started.code).toBe(0);
  const url = /^url +(\S+)$/m.exec(started.stdout)?.[1];
  const checkoutId = /^checkout +(cs_\S+)$/m.exec(started.stdout)?.[1];
  expect(checkoutId).toBeDefined();
  expect(url).toMatch(/^https?:\/\//);
  expect(url).toContain(checkoutId);
  expect(started.stderr).toContain('Open the URL to pay');
  expect(await planNow()).toBe('free');

  await fake.payCheckoutSession(checkoutId!);
  await fake.settled();
  await eventually(async () => ((await planNow()) === 'starter' ? true : undefined));
  const [subscribed, invoices] = await Promise.all([sdx(['billing', 'plans'], { env }), sdx(['billing', 'invoices'], { env })]);
  expect(marked(subscribed.stdout)).toEqual(['starter']);
  expect(subscribed.stdout).toMatch(/^subscription +sub_\S+$/m);
  expect(subscribed.stdout).toMatch(/^plan +starter$/m);
  expect(subscribed.stdout).toMatch(/^status +active$/m);
  expect(subscribed.stdout).toMatch(/^cancels at period end +no$/m);
  const subId = /^subscription +(sub_\S+)$/m.exec(subscribed.stdout)![1];

  expect(invoices.code).toBe(0);
  const rows = invoices.stdout.trimEnd().split('\n');
  expect(rows[0]).toMatch(/^ID +NUMBER +STATUS +AMOUNT +CREATED +URL$/);
  expect(rows).toHaveLength(2);
  const invoiceId = rows[1].split(/\s+/)[0];
  expect(invoiceId).toMatch(/^in_/);
  expect(rows[1]).toMatch(
    new RegExp(`^${invoiceId} +\\S+ +paid +\\$49\\.00 +\\S+ +${fake.url.replace(/\./g, '\\.')}/invoices/${invoiceId}$`),
  );

  // Change (an upgrade): the subscription answered; the plan once the difference is paid.
  const changed = await sdx(['billing', 'change', 'pro'], { env });
  expect(changed.code).toBe(0);
  expect(changed.stdout).toMatch(new RegExp(`^subscription +${subId}$`, 'm'));
  // The plan in force until the difference is paid.
  expect(changed.stdout).toMatch(/^plan +starter$/m);
  expect(changed.stderr).toContain('The difference is invoiced now; pro applies when it is paid.');
  await fake.settled();
  await eventually(async () => ((await planNow()) === 'pro' ? true : undefined));
  const [listedRan, newest, badLimit, portal, again] = await Promise.all([
    sdx(['billing', 'invoices', '--json'], { env }),
    sdx(['billing', 'invoices', '--limit', '1', '-q'], { env }),
    sdx(['billing', 'invoices', '--limit', '0'], { env }),
    sdx(['billing', 'portal', '-q'], { env }),
    sdx(['billing', 'subscribe', 'pro'], { env }),
  ]);
  // The same plan again changes nothing, and says so.
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(/^plan +pro$/m);
  expect(again.stderr).toContain('pro is the plan in force; nothing is invoiced.');
  const listed = json<Array<{ id: string; status: string; hosted_invoice_url: string }>>(listedRan);
  expect(listed).toHaveLength(2);
  expect(listed.map((i) => i.id)).toContain(invoiceId);
  for (const i of listed) expect(i).toMatchObject({ status: 'paid', hosted_invoice_url: `${fake.url}/invoices/${i.id}` });
  expect(newest.stdout).toBe(`${listed[0].id}\n`);
  expect(badLimit.code).toBe(2);
  expect(badLimit.stderr).toContain('expected an integer of at least 1');
  expect(portal.stdout.trim()).toMatch(new RegExp(`^${fake.url.replace(/\./g, '\\.')}/portal/bps_\\S+$`));

  // Cancel: at the end of the period; the plan stays until then.
  const cancelled = await sdx(['billing', 'cancel'], { env });
  expect(cancelled.code).toBe(0);
  expect(cancelled.stdout).toMatch(/^plan +pro$/m);
  expect(cancelled.stdout).toMatch(/^cancels at period end +yes$/m);
  expect(cancelled.stderr).toMatch(/^The plan stays until \d{4}-\d\d-\d\dT/m);
  expect(await planNow()).toBe('pro');
});

it('an unknown plan and a cancel without a subscription exit 3 with the API error', async () => {
  const env = await envFor(stack, stack.url!);
  const [unknown, unknownJson, cancel] = await Promise.all([
    sdx(['billing', 'subscribe', 'enterprise'], { env }),
    sdx(['billing', 'change', 'free', '--json'], { env }),
    sdx(['billing', 'cancel', '--json'], { env }),
  ]);
  expect(unknown.code).toBe(3);
  expect(unknown.stdout).toBe('');
  expect(unknown.stderr).toMatch(/^sdx: 422 unknown_plan: .+ \(request \S+\)\n$/);
  expect(unknownJson.code).toBe(3);
  expect(JSON.parse(unknownJson.stderr)).toMatchObject({ error: 'unknown_plan', status: 422 });
  expect(cancel.code).toBe(3);
  expect(JSON.parse(cancel.stderr)).toMatchObject({ error: 'subscription_not_found', status: 404 });
});

it('without payments configured: the plans with a note, and subscribing exits 3 saying payments are not configured', async () => {
  const env = await envFor(unpaid.stack, unpaid.url);
  const [plans, subscribe, portal] = await Promise.all([
    sdx(['billing', 'plans'], { env }),
    sdx(['billing', 'subscribe', 'starter'], { env }),
    sdx(['billing', 'portal', '--json'], { env }),
  ]);
  expect(plans.code).toBe(0);
  expect(marked(plans.stdout)).toEqual(['free']);
  expect(plans.stderr).toContain('Payments are not configured on this service');
  expect(subscribe.code).toBe(3);
  expect(subscribe.stderr).toContain('503 billing_unavailable: Payments are not configured on this service.');
  expect(portal.code).toBe(3);
  expect(JSON.parse(portal.stderr)).toMatchObject({
    error: 'billing_unavailable',
    status: 503,
    message: expect.stringContaining('Payments are not configured'),
  });
});
