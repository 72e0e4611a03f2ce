/**
 * Drill: Stripe's webhook while Postgres restarts.
 *
 * Starts a private Postgres and Redis, the api process (as in production) configured with a
 * fake Stripe on loopback (`@sdx/fake-stripe`, which signs events as Stripe does and retries a
 * delivery that did not get a 2xx, as Stripe does), and opens a Checkout Session per workspace
 * through POST /v1/billing/checkout. Some sessions are paid before the fault; then Postgres is
 * stopped (`fast` or `immediate`) while more are paid, so their events reach the webhook while
 * the database is down (and, for some, while their transaction is in flight), and started again.
 *
 * It passes when: the api process did not die; every delivery attempt was answered 200 or a 5xx
 * (never a 4xx, which would make Stripe give up on a valid event, and never a lost connection);
 * attempts during the fault got a 5xx; every event was finally answered 200; each paid session
 * granted its pack exactly once (purchased and lifetime credits equal one pack per workspace,
 * one `purchase` entry per payment, one stripe_events row per event handled); a replay of an
 * event after recovery changes nothing; and the ledger audit is clean.
 *
 *   npm run drill:stripe-webhook                 # 3 rounds
 *   DRILL_ROUNDS=5 npm run drill:stripe-webhook
 */
import { type RawBuilder, sql } from 'kysely';
import { createApiKey, createWorkspace, systemClock } from '@sdx/domain/testing';
import { type FakeStripe, startFakeStripe } from '@sdx/fake-stripe';
import { freePort, type LedgerReport } from '@sdx/testing';
import { keepAliveAgent, send } from '../lib/http';
import { checkLedger, type Check, report, type ServiceProcess, sleep, startDrillEnvironment, startService, waitUntil } from './lib';

export interface StripeWebhookDrillOptions {
  rounds: number;
  /** Sessions paid before each fault, and while Postgres is down. */
  sessionsPerRound: number;
  /** How long Postgres stays down each round. */
  downMs: number;
  log?: (line: string) => void;
}

export interface StripeWebhookDrillFigures {
  sessions: number;
  events: number;
  attempts: number;
  statuses: Record<string, number>;
  /** Attempts answered while Postgres was down, by status. */
  duringFault: Record<string, number>;
  /** Events not answered 200 in the end. */
  undelivered: string[];
  /** Workspaces whose purchased or lifetime credits are not exactly one pack. */
  wrongGrants: string[];
  purchaseEntries: number;
  stripeEvents: number;
  replayChanged: boolean;
  apiDied: boolean;
  audit: LedgerReport;
}

const PACK = { id: 'pack_10k', credits: 10_000 };

export async function runStripeWebhookDrill(options: StripeWebhookDrillOptions): Promise<StripeWebhookDrillFigures> {
  const log = options.log ?? ((line: string) => console.log(line));
  // Stripe retries for days; the fake retries on a short schedule that outlasts the fault.
  const fake = await startFakeStripe({ retryDelaysMs: [300, 600, 1000, 1500, 2000, 3000, 4000, 6000, 8000] });
  const port = await freePort();
  const env = await startDrillEnvironment('stripe', {
    PORT: String(port),
    APP_URL: `http://127.0.0.1:${port}`,
    STRIPE_SECRET_KEY: fake.secretKey,
    STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
    STRIPE_API_BASE: fake.url,
  });
  const base = `http://127.0.0.1:${port}`;
  fake.setWebhookUrl(`${base}/v1/billing/stripe/webhook`);
  let api: ServiceProcess | null = null;
  const agent = keepAliveAgent(8);
  try {
    api = startService('api', env.env);
    await waitUntil(
      async () => (await send(agent, base, { method: 'GET', path: '/readyz' }).catch(() => null))?.status === 200,
      30_000,
      'the api is ready',
    );

    const faultWindows: Array<[number, number]> = [];
    const sessions: Array<{ workspaceId: string; checkoutId: string }> = [];
    const open = async (count: number) => {
      const opened: string[] = [];
      for (let i = 0; i < count; i += 1) {
        const { workspaceId, apiKey } = await env.runtime.db.transaction().execute(async (tx) => {
          const workspace = await createWorkspace(tx, systemClock, { name: `drill buyer ${sessions.length}`, credits: 0 });
          return { workspaceId: workspace.id, apiKey: (await createApiKey(tx, workspace.id, 'drill')).api_key };
        });
        const reply = await send(agent, base, {
          method: 'POST',
          path: '/v1/billing/checkout',
          headers: { 'X-API-Key': apiKey },
          body: JSON.stringify({ pack_id: PACK.id }),
        });
        if (reply.status !== 201) throw new Error(`checkout: ${reply.status} ${reply.body.slice(0, 300)}`);
        const checkoutId = (JSON.parse(reply.body) as { checkout_id: string }).checkout_id;
        sessions.push({ workspaceId, checkoutId });
        opened.push(checkoutId);
      }
      return opened;
    };

    for (let round = 0; round < options.rounds; round += 1) {
      const before = await open(options.sessionsPerRound);
      const during = await open(options.sessionsPerRound);
      for (const id of before) await fake.payCheckoutSession(id);
      await fake.settled();
      // Paid as the fault begins: some deliveries are in flight when Postgres goes.
      const paying = during.map((id, i) => sleep(i * 40).then(() => fake.payCheckoutSession(id)));
      await sleep(20);
      const mode = round % 2 === 0 ? 'fast' : 'immediate';
      const down = Date.now();
      await env.postgres.stop(mode);
      await Promise.all(paying);
      await sleep(options.downMs);
      await env.postgres.start();
      faultWindows.push([down, Date.now()]);
      log(`round ${round + 1}: Postgres ${mode} stop, down ${Date.now() - down} ms, ${during.length} sessions paid meanwhile`);
      await fake.settled();
    }

    // A replay of a handled event changes nothing.
    const totals = async () => {
      const { rows } = await sql<{ purchased: number; lifetime: number }>`
        select coalesce(sum(purchased_balance), 0)::bigint as purchased, coalesce(sum(lifetime_purchased), 0)::bigint as lifetime from credit_balances`.execute(
        env.runtime.db,
      );
      return `${rows[0].purchased}/${rows[0].lifetime}`;
    };
    const beforeReplay = await totals();
    const replayed = fake.events.find((e) => e.type === 'checkout.session.completed')!;
    fake.emit(replayed);
    await fake.settled();
    const replayChanged = (await totals()) !== beforeReplay;

    const inFault = (at: number) => faultWindows.some(([from, to]) => at >= from && at <= to);
    const statuses: Record<string, number> = {};
    const duringFault: Record<string, number> = {};
    const okEvents = new Set<string>();
    for (const d of fake.deliveries) {
      const status = d.status === null ? 'no answer' : String(d.status);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (inFault(deliveryTime(d))) duringFault[status] = (duringFault[status] ?? 0) + 1;
      if (d.status === 200) okEvents.add(d.eventId);
    }
    const undelivered = fake.events.filter((e) => !okEvents.has(e.id)).map((e) => e.id);
    const { rows: grants } = await sql<{ workspace_id: string; purchased: number; lifetime: number }>`
      select workspace_id, purchased_balance::bigint as purchased, lifetime_purchased::bigint as lifetime from credit_balances`.execute(
      env.runtime.db,
    );
    const buyers = new Set(sessions.map((s) => s.workspaceId));
    const wrongGrants = grants
      .filter((g) => buyers.has(g.workspace_id) && (Number(g.purchased) !== PACK.credits || Number(g.lifetime) !== PACK.credits))
      .map((g) => `${g.workspace_id}: ${g.purchased}/${g.lifetime}`);
    const count = async (query: RawBuilder<{ n: number }>) => Number((await query.execute(env.runtime.db)).rows[0].n);
    return {
      sessions: sessions.length,
      events: fake.events.length,
      attempts: fake.deliveries.length,
      statuses,
      duringFault,
      undelivered,
      wrongGrants,
      purchaseEntries: await count(sql<{ n: number }>`select count(*)::int as n from credit_ledger where entry_type = 'purchase'`),
      stripeEvents: await count(sql<{ n: number }>`select count(*)::int as n from stripe_events`),
      replayChanged,
      apiDied: !api.alive(),
      audit: await checkLedger(env.runtime.db),
    };
  } finally {
    agent.destroy();
    await api?.stop('SIGTERM');
    await fake.close();
    await env.destroy();
  }
}

/** When a delivery attempt was answered (the fake records it as it completes, in order). */
function deliveryTime(d: FakeStripe['deliveries'][number]): number {
  return (d as { at?: number }).at ?? 0;
}

export function stripeDrillChecks(f: StripeWebhookDrillFigures): Check[] {
  const unexpected = Object.keys(f.statuses).filter((s) => s !== '200' && !/^5\d\d$/.test(s));
  return [
    { name: 'the api process lived', ok: !f.apiDied, detail: f.apiDied ? 'it exited' : 'alive' },
    { name: 'every attempt answered 200 or 5xx', ok: unexpected.length === 0, detail: JSON.stringify(f.statuses) },
    {
      name: 'attempts while Postgres was down got a 5xx',
      ok: Object.keys(f.duringFault).some((s) => /^5/.test(s)),
      detail: JSON.stringify(f.duringFault),
    },
    { name: 'every event answered 200 in the end', ok: f.undelivered.length === 0, detail: `${f.undelivered.length} of ${f.events} not` },
    {
      name: 'each session granted its pack once',
      ok: f.wrongGrants.length === 0 && f.purchaseEntries === f.sessions,
      detail: `${f.purchaseEntries} purchases for ${f.sessions} sessions; ${f.wrongGrants.slice(0, 3).join('; ') || 'no wrong balance'}`,
    },
    { name: 'each event handled once', ok: f.stripeEvents <= f.events, detail: `${f.stripeEvents} handled of ${f.events} emitted` },
    { name: 'a replay changed nothing', ok: !f.replayChanged, detail: f.replayChanged ? 'credits moved' : 'unchanged' },
  ];
}

if (require.main === module) {
  const rounds = Number(process.env.DRILL_ROUNDS ?? 3);
  void runStripeWebhookDrill({ rounds, sessionsPerRound: 6, downMs: 2500 }).then((f) => {
    report(
      `Stripe webhook while Postgres restarts: ${rounds} rounds`,
      {
        sessions: f.sessions,
        'events emitted': f.events,
        'delivery attempts': f.attempts,
        'attempt statuses': JSON.stringify(f.statuses),
        'during the faults': JSON.stringify(f.duringFault),
      },
      stripeDrillChecks(f),
      f.audit,
    );
  });
}
