/**
 * Billing benchmark: from a signed `checkout.session.completed` reaching the webhook to the
 * credits visible on GET /v1/account, at a fixed offered rate.
 *
 * The API runs as its own process (apps/api, as in production), configured with a fake Stripe
 * on loopback in this process (`@sdx/fake-stripe`, which answers the Stripe reads the handler
 * makes: the PaymentIntent and its payment method); this process also generates the load.
 * BENCH_EVENTS workspaces each open a Checkout Session (POST /v1/billing/checkout) and the fake
 * marks it paid without delivering anything; then the bench itself delivers each session's
 * signed `checkout.session.completed` at BENCH_RATE events a second (open loop: latency counts
 * from each event's scheduled time, so queueing counts), and as soon as the webhook answers,
 * reads GET /v1/account with the workspace's key. An event's latency is from its scheduled time
 * to the account read showing the pack's credits.
 *
 * Baseline, in the same run, just before: GET /v1/account alone, at the same rate, for other
 * workspaces.
 *
 * Monthly plans (issue 48), in the same run: BENCH_EVENTS workspaces each subscribe to `starter`
 * (POST /v1/billing/subscription, the fake pays the Checkout without delivering), then the bench
 * delivers each subscription's signed `checkout.session.completed` ahead (unmeasured) and its
 * `invoice.paid` at BENCH_RATE a second, each followed by GET /v1/account: the latency is from
 * the event's scheduled time to the account read showing the plan's `monthly_quota`.
 *
 * Target (issues: billing, 48): p99 < 100 ms at 50 events a second, for both. Exits with code 1
 * when missed, or when any event was not granted exactly once (or a quota is wrong).
 *
 * Run: npm run bench:billing   (BENCH_RATE 50, BENCH_EVENTS 1000; DATABASE_URL / REDIS_URL)
 */
import { loadConfig } from '@sdx/config';
import { startFakeStripe } from '@sdx/fake-stripe';
import { createRuntime } from '@sdx/runtime';
import { sql } from 'kysely';
import { benchPrefix, benchRedisUrl, createBenchDatabase } from './lib/db';
import { freePort } from '@sdx/testing';
import { keepAliveAgent, send } from './lib/http';
import { startService } from './drills/lib';
import { AMPLE, seedBenchWorkspace, waitFor } from './lib/seed';
import { ms, summarize, table, verdict } from './lib/stats';

const RATE = Number(process.env.BENCH_RATE ?? 50);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const TARGET_P99_MS = 100;
const PACK = { id: 'pack_10k', credits: 10_000 };

async function main(): Promise<void> {
  const fake = await startFakeStripe({ webhookUrl: null });
  const database = await createBenchDatabase('billing');
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: benchRedisUrl(),
    REDIS_PREFIX: benchPrefix('billing'),
    LOG_LEVEL: 'silent',
    SEED_DEMO: '0',
    STRIPE_SECRET_KEY: fake.secretKey,
    STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
    STRIPE_API_BASE: fake.url,
  });
  const runtime = createRuntime(config, { name: 'bench-billing', dbPoolSize: 20 });
  let failed = false;
  const agent = keepAliveAgent(64);
  const port = await freePort();
  const api = startService('api', {
    NODE_ENV: 'development',
    PORT: String(port),
    DATABASE_URL: database.url,
    REDIS_URL: config.redisUrl,
    REDIS_PREFIX: config.redisPrefix,
    LOG_LEVEL: 'silent',
    SEED_DEMO: '0',
    STRIPE_SECRET_KEY: fake.secretKey,
    STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
    STRIPE_API_BASE: fake.url,
  });
  const server = { url: `http://127.0.0.1:${port}` };
  try {
    await waitFor(() => runtime.redis.status === 'ready', 5000, 'Redis');
    for (let ready = false; !ready; await new Promise((resolve) => setTimeout(resolve, 100))) {
      ready = (await send(agent, server.url, { method: 'GET', path: '/readyz' }).catch(() => null))?.status === 200;
    }
    console.log(`billing: ${EVENTS} checkouts to open and pay on the fake Stripe...`);
    const buyers: Array<{ auth: Record<string, string>; payload: string }> = [];
    const readers: Array<Record<string, string>> = [];
    for (let i = 0; i < EVENTS; i += 1) {
      const ws = await seedBenchWorkspace(runtime, { name: `bench buyer ${i}`, ...AMPLE, credits: 0 });
      const auth = { 'X-API-Key': ws.apiKey };
      const reply = await send(agent, server.url, {
        method: 'POST',
        path: '/v1/billing/checkout',
        headers: auth,
        body: JSON.stringify({ pack_id: PACK.id }),
      });
      if (reply.status !== 201) throw new Error(`checkout: ${reply.status} ${reply.body.slice(0, 300)}`);
      const events = await fake.payCheckoutSession((JSON.parse(reply.body) as { checkout_id: string }).checkout_id);
      const completed = events.find((e) => e.type === 'checkout.session.completed');
      if (!completed) throw new Error('the fake emitted no checkout.session.completed');
      buyers.push({ auth, payload: JSON.stringify(completed) });
      readers.push({ 'X-API-Key': (await seedBenchWorkspace(runtime, { name: `bench reader ${i}`, ...AMPLE })).apiKey });
    }

    // The seeding wrote thousands of rows: flush them now, so that its checkpoint does not land
    // in the measured window, and let the machine settle.
    await sql`checkpoint`.execute(runtime.db);
    await new Promise((resolve) => setTimeout(resolve, 2000));

    const granted: number[] = [];
    const baseline: number[] = [];
    let wrong = 0;
    const interval = 1000 / RATE;
    /** Calls `each(i, at)` at RATE a second (open loop: `at` is its scheduled time), then waits for all. */
    const openLoop = async (each: (i: number, at: number) => Promise<void>) => {
      const start = performance.now() + 100;
      const runs: Array<Promise<void>> = [];
      for (let i = 0; i < EVENTS; i += 1) {
        const at = start + i * interval;
        const wait = at - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        runs.push(each(i, at));
      }
      await Promise.all(runs);
    };
    console.log(`baseline: GET /v1/account at ${RATE}/s (open loop)...`);
    await openLoop(async (i, at) => {
      const account = await send(agent, server.url, { method: 'GET', path: '/v1/account', headers: readers[i] });
      if (account.status !== 200) throw new Error(`account: ${account.status}`);
      baseline.push(performance.now() - at);
    });
    console.log(`delivering ${EVENTS} signed events at ${RATE}/s (open loop), each followed by GET /v1/account...`);
    await openLoop(async (i, at) => {
      const buyer = buyers[i];
      const hook = await send(agent, server.url, {
        method: 'POST',
        path: '/v1/billing/stripe/webhook',
        headers: { 'Stripe-Signature': fake.sign(buyer.payload) },
        body: buyer.payload,
      });
      if (hook.status !== 200) throw new Error(`webhook: ${hook.status} ${hook.body.slice(0, 300)}`);
      const account = await send(agent, server.url, { method: 'GET', path: '/v1/account', headers: buyer.auth });
      const credits = (JSON.parse(account.body) as { credits: { purchased_credits: number } }).credits.purchased_credits;
      if (credits !== PACK.credits) wrong += 1;
      granted.push(performance.now() - at);
    });

    console.log(`plans: ${EVENTS} subscriptions to open and pay on the fake Stripe...`);
    const subscribers: Array<{ auth: Record<string, string>; completed: string; paid: string }> = [];
    for (let i = 0; i < EVENTS; i += 1) {
      const ws = await seedBenchWorkspace(runtime, { name: `bench subscriber ${i}`, ...AMPLE, credits: 1000 });
      const auth = { 'X-API-Key': ws.apiKey };
      const reply = await send(agent, server.url, {
        method: 'POST',
        path: '/v1/billing/subscription',
        headers: auth,
        body: JSON.stringify({ plan_id: 'starter' }),
      });
      if (reply.status !== 201) throw new Error(`subscription: ${reply.status} ${reply.body.slice(0, 300)}`);
      const events = await fake.payCheckoutSession((JSON.parse(reply.body) as { checkout_id: string }).checkout_id);
      const completed = events.find((e) => e.type === 'checkout.session.completed');
      const paid = events.find((e) => e.type === 'invoice.paid');
      if (!completed || !paid) throw new Error('the fake emitted no checkout.session.completed or invoice.paid');
      subscribers.push({ auth, completed: JSON.stringify(completed), paid: JSON.stringify(paid) });
    }
    for (const subscriber of subscribers) {
      const hook = await send(agent, server.url, {
        method: 'POST',
        path: '/v1/billing/stripe/webhook',
        headers: { 'Stripe-Signature': fake.sign(subscriber.completed) },
        body: subscriber.completed,
      });
      if (hook.status !== 200) throw new Error(`webhook: ${hook.status} ${hook.body.slice(0, 300)}`);
    }
    await sql`checkpoint`.execute(runtime.db);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const planned: number[] = [];
    let wrongQuota = 0;
    console.log(`delivering ${EVENTS} signed invoice.paid at ${RATE}/s (open loop), each followed by GET /v1/account...`);
    await openLoop(async (i, at) => {
      const subscriber = subscribers[i];
      const hook = await send(agent, server.url, {
        method: 'POST',
        path: '/v1/billing/stripe/webhook',
        headers: { 'Stripe-Signature': fake.sign(subscriber.paid) },
        body: subscriber.paid,
      });
      if (hook.status !== 200) throw new Error(`webhook: ${hook.status} ${hook.body.slice(0, 300)}`);
      const account = await send(agent, server.url, { method: 'GET', path: '/v1/account', headers: subscriber.auth });
      if ((JSON.parse(account.body) as { monthly_quota: number }).monthly_quota !== 50_000) wrongQuota += 1;
      planned.push(performance.now() - at);
    });

    const { rows } = await sql<{ n: number }>`select count(*)::int as n from credit_ledger where entry_type = 'purchase'`.execute(
      runtime.db,
    );
    const purchases = rows[0].n;
    const g = summarize(granted);
    const b = summarize(baseline);
    const p = summarize(planned);
    console.log(
      `\n${table([
        ['at ' + RATE + '/s', 'n', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
        ['signed event → credits on GET /v1/account', String(g.count), ms(g.p50), ms(g.p90), ms(g.p99), ms(g.max)],
        ['signed invoice.paid → plan quota on GET /v1/account', String(p.count), ms(p.p50), ms(p.p90), ms(p.p99), ms(p.max)],
        ['baseline: GET /v1/account alone', String(b.count), ms(b.p50), ms(b.p90), ms(b.p99), ms(b.max)],
      ])}`,
    );
    const exact = wrong === 0 && purchases === EVENTS && wrongQuota === 0;
    const fast = g.p99 < TARGET_P99_MS && p.p99 < TARGET_P99_MS;
    console.log(`plans: ${wrongQuota} reads without the plan's quota; invoice.paid p99 ${ms(p.p99)} ms`);
    failed = !exact || !fast;
    console.log(`\ngranted exactly once: ${purchases} purchases for ${EVENTS} events, ${wrong} reads without the pack: ${verdict(exact)}`);
    console.log(`p99 ${ms(g.p99)} ms (target < ${TARGET_P99_MS} ms at ${RATE} events/s): ${verdict(fast)}`);
  } finally {
    agent.destroy();
    await api.stop('SIGTERM');
    await runtime.close();
    await database.drop();
    await fake.close();
  }
  if (failed) process.exitCode = 1;
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
