/**
 * Load generator, run in its own process (fork) so that client work does not share the event
 * loop of the server under test. The parent sends one LoadPlan over IPC and gets a LoadReport.
 *
 * open: requests are scheduled at fixed intervals (rate per second) whatever the server does;
 *   latency is measured from the scheduled time, so queueing delay counts (no coordinated
 *   omission).
 * closed: `concurrency` loops each send the next request when the previous one answered.
 * Request bodies are `bodyTemplate` with every `{i}` replaced by a unique sequence number.
 */
import { fork } from 'node:child_process';
import { keepAliveAgent, send } from './http';

export interface LoadPlan {
  mode: 'open' | 'closed';
  baseUrl: string;
  path: string;
  headers: Record<string, string>;
  /** When set, request i also sends headerSets[i % length] (one API key per workspace, say). */
  headerSets?: Array<Record<string, string>>;
  bodyTemplate: string;
  /** open: requests per second. */
  rate?: number;
  /**
   * open: the first warmupMs of the schedule run at the same rate but are not recorded, so the
   * figures are those of a server (and a load generator) already running at that rate.
   */
  warmupMs?: number;
  /** closed: parallel request loops. */
  concurrency?: number;
  durationMs?: number;
  /** closed: stop after this many requests in total (instead of, or before, durationMs). */
  total?: number;
  /** Sequence numbers start here, so several runs never repeat a body. */
  firstIndex?: number;
  /** Status code a successful request answers. */
  okStatus: number;
}

export interface LoadReport {
  latencies: number[];
  sent: number;
  ok: number;
  statuses: Record<string, number>;
  elapsedMs: number;
  firstError: string | null;
}

async function run(plan: LoadPlan): Promise<LoadReport> {
  const agent = keepAliveAgent(plan.mode === 'open' ? 512 : (plan.concurrency ?? 16));
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let ok = 0;
  let sent = 0;
  let firstError: string | null = null;
  let index = plan.firstIndex ?? 0;
  const one = async (scheduledAt: number, record = true) => {
    const i = index++;
    const body = plan.bodyTemplate.replaceAll('{i}', String(i));
    const headers = plan.headerSets ? { ...plan.headers, ...plan.headerSets[i % plan.headerSets.length] } : plan.headers;
    if (record) sent++;
    try {
      const reply = await send(agent, plan.baseUrl, { method: 'POST', path: plan.path, headers, body });
      if (!record) return;
      statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
      if (reply.status === plan.okStatus) {
        ok++;
        latencies.push(performance.now() - scheduledAt);
      } else if (!firstError) firstError = `${reply.status} ${reply.body.slice(0, 300)}`;
    } catch (error) {
      if (!record) return;
      statuses.error = (statuses.error ?? 0) + 1;
      if (!firstError) firstError = String(error);
    }
  };

  let started = performance.now();
  if (plan.mode === 'open') {
    const interval = 1000 / plan.rate!;
    const warm = Math.round(((plan.warmupMs ?? 0) / 1000) * plan.rate!);
    const count = warm + Math.round((plan.durationMs! / 1000) * plan.rate!);
    const scheduleStart = started;
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const due = scheduleStart + i * interval;
      // No busy-wait for an exact start: the load generator shares the machine with the server,
      // and latency is measured from the scheduled time, so a late timer hides no queueing.
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (i === warm) started = due;
      inflight.push(one(due, i >= warm));
    }
    await Promise.all(inflight);
  } else {
    const deadline = plan.durationMs ? started + plan.durationMs : Number.POSITIVE_INFINITY;
    const total = plan.total ?? Number.POSITIVE_INFINITY;
    await Promise.all(
      Array.from({ length: plan.concurrency ?? 16 }, async () => {
        while (performance.now() < deadline && sent < total) await one(performance.now());
      }),
    );
  }
  const elapsedMs = performance.now() - started;
  agent.destroy();
  return { latencies, sent, ok, statuses, elapsedMs, firstError };
}

/** Runs a plan in a fresh child process and returns its report. */
export function runLoad(plan: LoadPlan): Promise<LoadReport> {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ['--loadgen'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let report: LoadReport | null = null;
    child.once('message', (message) => {
      report = message as LoadReport;
    });
    child.once('error', reject);
    child.once('exit', (code) => (report ? resolve(report) : reject(new Error(`load generator exited with ${code}`))));
    child.send(plan);
  });
}

if (process.argv.includes('--loadgen')) {
  process.once('message', (plan) => {
    run(plan as LoadPlan)
      .then((report) => process.send!(report, () => process.exit(0)))
      .catch((error) => {
        console.error(error);
        process.exit(1);
      });
  });
}
