/**
 * Drill: two schedulers with 1,000 due schedules, one SIGKILLed mid-dispatch.
 *
 * A private Postgres and Redis; 1,000 daily schedules over 20 workspaces, all due now; two real
 * scheduler processes (apps/scheduler) start together; one is killed with SIGKILL as soon as
 * the first runs are dispatched. The other dispatches the rest, and recovers the runs the dead
 * one had claimed but not dispatched: their row locks (the dead dispatcher's hold) went with its
 * connections, so the survivor's next recovery pass (every second) takes them.
 *
 * Checks: every occurrence dispatched, each exactly once (one run, one job per schedule), none
 * missed; the surviving scheduler never died; the ledger is exact (one reservation per job).
 *
 * Run: npm run drill:scheduler-kill   (DRILL_SCHEDULES=1000)
 */
import { sql } from 'kysely';
import { createWorkspace, newId, systemClock } from '@sdx/domain/testing';
import { checkLedger, report, startDrillEnvironment, startService, waitUntil } from './lib';

const SCHEDULES = Number(process.env.DRILL_SCHEDULES ?? 1_000);
const WORKSPACES = 20;

async function main(): Promise<void> {
  const drill = await startDrillEnvironment('scheduler_kill', { SCHEDULER_TICK_MS: '200' });
  const { runtime } = drill;
  const schedulers: Awaited<ReturnType<typeof startService>>[] = [];
  try {
    const due = new Date(Math.floor(Date.now() / 1000) * 1000 - 1000);
    const workspaces: string[] = [];
    await runtime.db.transaction().execute(async (tx) => {
      for (let i = 0; i < WORKSPACES; i++)
        workspaces.push((await createWorkspace(tx, systemClock, { name: `drill ${i}`, credits: 1_000_000, maxActiveJobs: 100_000 })).id);
    });
    const rows = Array.from({ length: SCHEDULES }, (_, i) => ({
      id: newId('sch'),
      workspace_id: workspaces[i % WORKSPACES],
      name: `drill ${i}`,
      platform: 'instagram',
      operation: 'profile',
      targets: JSON.stringify([`drill_user_${i}`]),
      requested_limit: 1,
      frequency: 'daily' as const,
      timezone: 'UTC',
      starts_at: due,
      starts_at_text: due.toISOString(),
      next_run_at: due,
      status: 'active' as const,
    }));
    for (let i = 0; i < rows.length; i += 500)
      await runtime.db
        .insertInto('schedules')
        .values(rows.slice(i, i + 500))
        .execute();

    const dispatched = async () =>
      Number(
        (await sql<{ n: number }>`select count(*)::int as n from schedule_runs where dispatched_at is not null`.execute(runtime.db)).rows[0]
          .n,
      );
    const started = Date.now();
    const victim = startService('scheduler', drill.env, 'scheduler-killed');
    const survivor = startService('scheduler', drill.env, 'scheduler-survivor');
    schedulers.push(victim, survivor);
    const atKill = await waitUntil(
      async () => {
        const n = await dispatched();
        return n > 0 ? n : null;
      },
      60_000,
      'first dispatches',
      5,
    ).catch((error: unknown) => {
      for (const s of schedulers) console.error(`--- ${s.name}\n${s.output().slice(-4000)}`);
      throw error;
    });
    const killExit = await victim.stop('SIGKILL');
    const killedAt = Date.now();
    const claimedUndispatched = Number(
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from schedule_runs where dispatched_at is null and job_id is null and batch_id is null`.execute(
          runtime.db,
        )
      ).rows[0].n,
    );
    await waitUntil(async () => (await dispatched()) >= SCHEDULES, 180_000, 'every occurrence dispatched', 200);
    const allMs = Date.now() - started;
    const afterKillMs = Date.now() - killedAt;
    const survivorAlive = survivor.alive();
    const survivorExit = await survivor.stop('SIGTERM');

    const { rows: counts } = await sql<{
      runs: number;
      occurrences: number;
      jobs: number;
      job_schedules: number;
      missed: number;
      dispatched: number;
    }>`
      select
        (select count(*)::int from schedule_runs) as runs,
        (select count(distinct (schedule_id, scheduled_for))::int from schedule_runs) as occurrences,
        (select count(*)::int from jobs) as jobs,
        (select count(distinct schedule_id)::int from jobs) as job_schedules,
        (select count(*)::int from schedules s where not exists (select 1 from schedule_runs r where r.schedule_id = s.id and r.dispatched_at is not null)) as missed,
        (select count(*)::int from schedule_runs where dispatched_at is not null) as dispatched
    `.execute(runtime.db);
    const c = counts[0];
    const recovered = survivor.logs().filter((l) => l.msg === 'recovered an undispatched schedule run').length;
    const ledger = await checkLedger(runtime.db);
    report(
      `drill: two schedulers, ${SCHEDULES} due schedules, one SIGKILLed mid-dispatch`,
      {
        'dispatched when one scheduler was killed': atKill,
        'runs claimed and not dispatched at the kill': claimedUndispatched,
        'runs recovered by the survivor': recovered,
        'every occurrence dispatched after (s)': (allMs / 1000).toFixed(1),
        'of which after the kill (s)': (afterKillMs / 1000).toFixed(1),
        'runs / occurrences / jobs': `${c.runs} / ${c.occurrences} / ${c.jobs}`,
      },
      [
        {
          name: 'the killed scheduler died of SIGKILL mid-dispatch',
          ok: killExit.signal === 'SIGKILL' && atKill < SCHEDULES,
          detail: `${atKill} of ${SCHEDULES} dispatched then`,
        },
        {
          name: 'every occurrence dispatched, none missed',
          ok: c.dispatched === SCHEDULES && c.missed === 0,
          detail: `${c.dispatched} dispatched, ${c.missed} missed`,
        },
        {
          name: 'no occurrence dispatched twice',
          ok: c.runs === c.occurrences && c.jobs === c.job_schedules && c.jobs === SCHEDULES,
          detail: `${c.runs - c.occurrences} duplicate runs, ${c.jobs - c.job_schedules} duplicate jobs`,
        },
        {
          name: 'the surviving scheduler never died and stopped cleanly',
          ok: survivorAlive && survivorExit.code === 0,
          detail: `exit ${survivorExit.code ?? survivorExit.signal}`,
        },
      ],
      ledger,
    );
  } finally {
    for (const s of schedulers) await s.stop('SIGKILL');
    await drill.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
