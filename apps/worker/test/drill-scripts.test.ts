import { spawn } from 'node:child_process';
import path from 'node:path';

/**
 * The drill scripts themselves (bench/drills, `npm run drill:<name>`), run small: each starts its
 * private Postgres and Redis, runs the service's processes, and must end with "drill passed"
 * and exit 0. Their full sizes are for `npm run`; this keeps the scripts from breaking unseen
 * (a change to how a process chooses its providers once stopped drill:worker-kill at its first
 * job). drill:postgres runs one round in apps/api/test/drill-postgres-restart.test.ts.
 */
const ROOT = path.resolve(__dirname, '../../..');

function runDrill(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('bench/drills', script)], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

const processDrills: Array<[string, string, Record<string, string>]> = [
  ['a worker SIGKILLed mid-job', 'worker-kill.ts', { DRILL_KILLS: '2', DRILL_JOBS: '6' }],
  ['two schedulers, one SIGKILLed mid-dispatch', 'scheduler-kill.ts', { DRILL_SCHEDULES: '600' }],
];
// The Redis faults are drilled in the suite by apps/worker/test/fault-drills.test.ts (the same
// faults against the same code, in process); their scripts run with `npm run test:drills`
// (DRILL_SCRIPTS=all), which CI leaves out to stay under 30 minutes.
const redisDrills: Array<[string, string, Record<string, string>]> = [
  ['Redis restarted empty with jobs queued', 'redis-empty.ts', { DRILL_JOBS: '400', DRILL_WORKERS: '2' }],
  ['Redis stopped under load', 'redis-outage.ts', { DRILL_OUTAGE_S: '2', DRILL_RATE: '10', DRILL_BEFORE_S: '2', DRILL_AFTER_S: '3' }],
];
const drills = process.env.DRILL_SCRIPTS === 'all' ? [...processDrills, ...redisDrills] : processDrills;

describe('drill scripts, small', () => {
  it.each(drills)(
    '%s (%s) passes',
    async (_name, script, env) => {
      const { code, output } = await runDrill(script, env);
      // The drill's own report on failure: which check failed, with its figures.
      if (code !== 0 || !/drill passed/.test(output)) throw new Error(`${script} exited ${code}:\n${output.slice(-4000)}`);
      expect(output).toMatch(/PASS {2}ledger exact/);
      expect(output).not.toMatch(/FAIL {2}/);
    },
    180_000,
  );
});
