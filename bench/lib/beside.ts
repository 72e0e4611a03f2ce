import type http from 'node:http';
import { performance } from 'node:perf_hooks';
import { applyPlan, dispatchMonitors, systemActor } from '@sdx/domain/testing';
import type { Runtime } from '@sdx/runtime';
import { keepAliveAgent, send } from './http';
import { AMPLE, seedBenchWorkspace } from './seed';
import { ms, summarize } from './stats';

/**
 * What runs beside a benchmark's load (issue 51): a workspace on a paid plan, and a monitor.
 *
 * - The paid workspace is a bench workspace put on the first paid plan of PLANS (`pro` by
 *   default) as a paid invoice puts it (applyPlan: its monthly allowance is the plan's, spent
 *   before purchased credits), with an active subscription row beside it, as Stripe's events
 *   leave one. Its rate limit and active-job cap stay ample (a plan of the default list names
 *   none), so only admission's own work is measured.
 * - The monitor is a profile monitor of `targets` targets in a workspace of its own, run by hand
 *   (POST /v1/monitors/{id}/run, through the API) whenever its previous run has ended, at most
 *   every `everyMs`, and advanced once a second as the scheduler's tick does (dispatchMonitors:
 *   its batches dispatched, its completion once every job has ended: results read, changed
 *   values kept as points). A reader polls its series once a second (GET …/series of one
 *   target, as the console's chart does). Its jobs run on whatever worker the load has; without
 *   one (a load that only submits), the load's retirer ends them.
 */

export async function seedPaidWorkspace(
  runtime: Runtime,
  name: string,
): Promise<{ workspaceId: string; apiKey: string; keyId: string; planId: string }> {
  const ws = await seedBenchWorkspace(runtime, { name, ...AMPLE });
  const plan = runtime.services.config.plans.find((p) => p.amount > 0);
  if (!plan) throw new Error('PLANS names no paid plan');
  await runtime.db.transaction().execute(async (tx) => {
    const now = runtime.services.clock.now();
    await applyPlan(tx, ws.workspaceId, plan, now, now, systemActor('bench'));
    await tx
      .insertInto('billing_subscriptions')
      .values({
        id: `sub_bench_${ws.workspaceId}`,
        workspace_id: ws.workspaceId,
        plan_id: plan.id,
        price_plan_id: plan.id,
        status: 'active',
        current_period_end: new Date(now.getTime() + 30 * 86_400_000),
      })
      .execute();
  });
  return { ...ws, planId: plan.id };
}

/** The figures of a monitor beside the load, from its start to its stop. */
export interface BesideReport {
  runsStarted: number;
  runsCompleted: number;
  /** Each completed run's wall time, from its POST …/run to its completion, ms. */
  runMs: number[];
  pointsKept: number;
  /** Latencies of POST …/run and of GET …/series, ms, and the requests that failed. */
  runRequests: { latencies: number[]; failed: number; elapsedMs: number };
  seriesRequests: { latencies: number[]; failed: number; elapsedMs: number };
  /** Failures of the tick (dispatchMonitors), counted, the first kept. */
  tickErrors: number;
  firstError: string | null;
}

export interface MonitorBeside {
  workspaceId: string;
  /** No new run from now on; resolves once the open run, if any, has ended. */
  pause(timeoutMs?: number): Promise<void>;
  resume(): void;
  /** What it did since it started or since the last take, its counts started again. */
  take(): BesideReport;
  /** Stops it; what it did since the last take. */
  stop(): Promise<BesideReport>;
}

const emptyReport = (): BesideReport => ({
  runsStarted: 0,
  runsCompleted: 0,
  runMs: [],
  pointsKept: 0,
  runRequests: { latencies: [], failed: 0, elapsedMs: 0 },
  seriesRequests: { latencies: [], failed: 0, elapsedMs: 0 },
  tickErrors: 0,
  firstError: null,
});

/** Its requests as rows of a load table: endpoint, mode, ok, failed, req/s, p50, p90, p99, max (ms). */
export function besideRows(report: BesideReport): string[][] {
  const row = (name: string, mode: string, r: BesideReport['runRequests']) => {
    const s = summarize(r.latencies);
    return [
      name,
      mode,
      String(r.latencies.length),
      String(r.failed),
      (r.latencies.length / (r.elapsedMs / 1000)).toFixed(1),
      ms(s.p50),
      ms(s.p90),
      ms(s.p99),
      ms(s.max),
    ];
  };
  return [
    row('beside: POST /v1/monitors/{id}/run', 'when the last ended', report.runRequests),
    row('beside: GET /v1/monitors/{id}/series', 'every second', report.seriesRequests),
  ];
}

/** Its runs in one line. */
export function besideLine(report: BesideReport): string {
  const runs = summarize(report.runMs);
  return (
    `the monitor beside: ${report.runsStarted} runs started, ${report.runsCompleted} completed` +
    (report.runMs.length > 0 ? ` (run wall time p50 ${(runs.p50 / 1000).toFixed(2)} s, max ${(runs.max / 1000).toFixed(2)} s)` : '') +
    `, ${report.pointsKept} points kept` +
    (report.tickErrors > 0 || report.firstError ? `; ${report.tickErrors} failed ticks, first failure: ${report.firstError}` : '')
  );
}

export async function startMonitorBeside(
  runtime: Runtime,
  apiUrl: string,
  options: { targets: number; everyMs: number },
): Promise<MonitorBeside> {
  const ws = await seedBenchWorkspace(runtime, { name: 'bench monitor beside', ...AMPLE });
  const agent: http.Agent = keepAliveAgent(2);
  const headers = { 'X-API-Key': ws.apiKey };
  const targets = Array.from({ length: options.targets }, (_, i) => `beside_${i}_sandbox_drift_5`);
  const created = await send(agent, apiUrl, {
    method: 'POST',
    path: '/v1/monitors',
    headers,
    body: JSON.stringify({ name: 'beside the load', platform: 'instagram', operation: 'profile', targets, frequency: 'hourly' }),
  });
  if (created.status !== 201) throw new Error(`POST /v1/monitors: ${created.status} ${created.body.slice(0, 300)}`);
  const monitorId = (JSON.parse(created.body) as { id: string }).id;
  let report = emptyReport();
  let since = performance.now();
  const take = () => {
    const taken = report;
    const now = performance.now();
    taken.runRequests.elapsedMs = now - since;
    taken.seriesRequests.elapsedMs = now - since;
    report = emptyReport();
    since = now;
    return taken;
  };
  let open: { id: string; at: number } | null = null;
  let lastRunAt = -Infinity;
  let paused = false;
  let stopped = false;
  const fail = (error: unknown) => {
    report.tickErrors += 1;
    report.firstError ??= String(error);
  };
  const timed = async (into: BesideReport['runRequests'], method: 'GET' | 'POST', path: string) => {
    const t = performance.now();
    const reply = await send(agent, apiUrl, { method, path, headers });
    if (reply.status >= 300) {
      into.failed += 1;
      report.firstError ??= `${method} ${path}: ${reply.status} ${reply.body.slice(0, 200)}`;
      return null;
    }
    into.latencies.push(performance.now() - t);
    return reply;
  };
  const tick = async () => {
    if (!open && !paused && performance.now() - lastRunAt >= options.everyMs) {
      lastRunAt = performance.now();
      const reply = await timed(report.runRequests, 'POST', `/v1/monitors/${monitorId}/run`);
      if (reply) {
        open = { id: (JSON.parse(reply.body) as { id: string }).id, at: lastRunAt };
        report.runsStarted += 1;
      }
    }
    await dispatchMonitors(runtime.services);
    if (open) {
      const run = await runtime.db
        .selectFrom('monitor_runs')
        .select(['status', 'observations'])
        .where('id', '=', open.id)
        .executeTakeFirstOrThrow();
      if (run.status !== 'queued' && run.status !== 'running') {
        if (run.status === 'completed') {
          report.runsCompleted += 1;
          report.runMs.push(performance.now() - open.at);
          report.pointsKept += run.observations;
        } else {
          fail(`run ${open.id} ended ${run.status}`);
        }
        open = null;
      }
    }
    await timed(report.seriesRequests, 'GET', `/v1/monitors/${monitorId}/series?target=${targets[0]}&metric=followers_count`);
  };
  const loop = (async () => {
    while (!stopped) {
      const t = performance.now();
      await tick().catch(fail);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (performance.now() - t))));
    }
  })();
  return {
    workspaceId: ws.workspaceId,
    async pause(timeoutMs = 120_000) {
      paused = true;
      const deadline = Date.now() + timeoutMs;
      while (open && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
      if (open) throw new Error(`the monitor's run ${(open as { id: string }).id} did not end within ${timeoutMs} ms`);
    },
    resume() {
      paused = false;
    },
    take,
    async stop() {
      stopped = true;
      await loop;
      agent.destroy();
      return take();
    },
  };
}
