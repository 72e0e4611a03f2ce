/**
 * A/B of a bench against an earlier revision, on one machine, taking turns:
 *
 *   npm run bench:ab -- <rev> [bench] [parts]
 *   e.g. npm run bench:ab -- 6e61818            (bench:jobs, both parts)
 *        npm run bench:ab -- 6e61818 jobs a
 *        npm run bench:ab -- v1.1.0 webhooks
 *
 * `<rev>` is any revision git knows, or a version of CHANGELOG.md (`1.1.0`, `v1.1.0`). Its files
 * are unpacked (git archive) into a temporary folder with a node_modules of links to this
 * checkout's, its own workspace packages in place (bench/drills/lib/previous-release.ts, as the
 * upgrade drill takes a release); the folder is removed at the end, also on Ctrl-C.
 *
 * Then, for BENCH_AB_ROUNDS rounds (3), the revision's bench (bench/<bench>.ts of ITS tree, with
 * the options it understands) and the working tree's run one after the other, the side that goes
 * first alternating by round, so drift of the machine reaches both. `parts` is passed as
 * BENCH_PARTS; every other variable of the environment (BENCH_TURNS, BENCH_CLOSED_SECONDS, ...)
 * reaches both sides as is (a revision that does not know one ignores it).
 *
 * Each run's judged figures are read from its `BENCH_RESULT {json}` line, or, for a revision whose
 * bench does not print one, from its verdict lines. Printed: each figure's median on both sides,
 * working tree / revision, and the verdict of each median against the targets (issue 51,
 * docs/performance.md). Exits with code 1 when the working tree's median misses a target.
 *
 * BENCH_AB_VERBOSE=1 echoes every line of the runs; otherwise a failed or unparsable run prints its
 * last lines.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { changelogReleases, installRelease, REPO_ROOT, unpackRelease } from './drills/lib/previous-release';
import { table } from './lib/stats';

export interface Figure {
  key: string;
  label: string;
  /** Target: the figure must be ≥ `min` or < `max`; none for figures printed for information. */
  min?: number;
  max?: number;
  /** How to read it from a bench that prints no BENCH_RESULT line. */
  parse?: (line: string) => number | undefined;
}

const num = (re: RegExp) => (line: string) => {
  const m = re.exec(line);
  return m ? Number(m[1]) : undefined;
};

/** The judged figures of each bench and its targets. */
export const BENCHES: Record<string, Figure[]> = {
  jobs: [
    {
      key: 'a.api.ratio',
      label: '(a) 1 workspace: max throughput / bare insert',
      min: 0.55,
      parse: num(/^\(a\) POST \/v1\/jobs, 1 workspace: max throughput ratio to bare insert ([\d.]+)/),
    },
    {
      key: 'a.spread.ratio',
      label: '(a) 8 workspaces: max throughput / bare insert',
      min: 0.5,
      parse: num(/^\(a\) POST \/v1\/jobs, \d+ workspaces: max throughput ratio to bare insert ([\d.]+)/),
    },
    {
      key: 'a.api.p99_ms',
      label: '(a) 1 workspace: p99 ms at the offered rate',
      max: 50,
      parse: num(/^\(a\) POST \/v1\/jobs, 1 workspace: .* p99 ([\d.]+) ms/),
    },
    {
      key: 'a.spread.p99_ms',
      label: '(a) 8 workspaces: p99 ms at the offered rate',
      max: 50,
      parse: num(/^\(a\) POST \/v1\/jobs, \d+ workspaces: .* p99 ([\d.]+) ms/),
    },
    {
      key: 'b.ratio',
      label: '(b) createJob + worker / raw BullMQ',
      min: 0.3,
      parse: num(/^\(b\) end-to-end ratio .*?: ([\d.]+) \(median/),
    },
    { key: 'b.http_ratio', label: '(b) over HTTP / raw BullMQ', parse: num(/over HTTP \(POST \/v1\/jobs \+ worker\): ([\d.]+)/) },
  ],
  webhooks: [
    {
      key: 'a.ratio',
      label: '(a) events/s / bare got POSTs',
      min: 0.5,
      parse: num(/^\(a\) events\/s from completion to signed delivery .*?: ([\d.]+) \(median/),
    },
    {
      key: 'b.p99_ms',
      label: '(b) p99 ms completion → delivery',
      max: 250,
      parse: num(/^\(b\) p99 completion → delivery .*?: ([\d.]+) ms/),
    },
  ],
};

/** The figures of one run's output: its BENCH_RESULT line, else its verdict lines. */
export function parseFigures(bench: string, lines: string[]): Record<string, number> {
  const summary = [...lines].reverse().find((l) => l.startsWith('BENCH_RESULT '));
  if (summary) {
    const parsed = JSON.parse(summary.slice('BENCH_RESULT '.length)) as { figures?: Record<string, number | null> };
    return Object.fromEntries(
      Object.entries(parsed.figures ?? {}).filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1])),
    );
  }
  const out: Record<string, number> = {};
  for (const figure of BENCHES[bench] ?? []) {
    for (const line of lines) {
      const value = figure.parse?.(line.trim());
      if (value !== undefined && Number.isFinite(value)) out[figure.key] = value;
    }
  }
  return out;
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export function meets(figure: Figure, value: number): boolean | null {
  if (!Number.isFinite(value)) return null;
  if (figure.min !== undefined) return value >= figure.min;
  if (figure.max !== undefined) return value < figure.max;
  return null;
}

function resolveRev(asked: string): string {
  const version = asked.replace(/^v/, '');
  const listed = changelogReleases().find((r) => r.version === version);
  const rev = listed ? listed.commit : asked;
  try {
    return execFileSync('git', ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  } catch {
    throw new Error(`${asked}: neither a version of CHANGELOG.md nor a revision git knows`);
  }
}

interface Run {
  code: number | null;
  lines: string[];
  seconds: number;
}

function runBench(root: string, bench: string, env: NodeJS.ProcessEnv, tag: string, verbose: boolean): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('bench', `${bench}.ts`)], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let rest = '';
    const take = (chunk: Buffer) => {
      const text = rest + chunk.toString('utf8');
      const parts = text.split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (verbose) process.stdout.write(`  [${tag}] ${line}\n`);
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code) => {
      if (rest) lines.push(rest);
      resolve({ code, lines, seconds: (Date.now() - started) / 1000 });
    });
  });
}

async function main(): Promise<void> {
  const [asked, bench = 'jobs', parts] = process.argv.slice(2);
  if (!asked || !BENCHES[bench]) {
    console.error(`usage: npm run bench:ab -- <rev> [${Object.keys(BENCHES).join('|')}] [parts, e.g. a or a,b]`);
    process.exit(2);
  }
  const rounds = Math.max(1, Number(process.env.BENCH_AB_ROUNDS ?? 3));
  const verbose = process.env.BENCH_AB_VERBOSE === '1';
  const sha = resolveRev(asked);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sdx-bench-ab-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const onSignal = (signal: NodeJS.Signals) => {
    cleanup();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const env: NodeJS.ProcessEnv = { ...process.env, ...(parts ? { BENCH_PARTS: parts } : {}) };
  const sides = [
    { name: `${asked} (${sha.slice(0, 9)})`, short: 'A', root: dir },
    { name: 'working tree', short: 'B', root: REPO_ROOT },
  ];
  const figures = new Map<string, Record<string, number>[]>(sides.map((s) => [s.short, []]));
  let failed = false;
  try {
    console.log(
      `bench:ab ${bench}${parts ? ` parts ${parts}` : ''}: A = ${sides[0].name}, B = working tree ${REPO_ROOT}; ${rounds} round(s); load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    unpackRelease(sha, dir);
    installRelease(dir, 'link');
    console.log(`A unpacked into ${dir} (node_modules linked to this checkout's)`);
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? sides : [...sides].reverse();
      for (const side of order) {
        const run = await runBench(side.root, bench, env, `${side.short}${round}`, verbose);
        const got = parseFigures(bench, run.lines);
        figures.get(side.short)!.push(got);
        const shown = Object.entries(got)
          .map(([k, v]) => `${k}=${Number(v.toFixed(3))}`)
          .join(' ');
        console.log(
          `round ${round}, ${side.short} (${side.name}): ${run.seconds.toFixed(0)} s, exit ${run.code}; ${shown || 'no figures'}`,
        );
        if (!verbose && (Object.keys(got).length === 0 || (run.code !== 0 && run.code !== 1))) {
          console.log(
            run.lines
              .slice(-15)
              .map((l) => `    | ${l}`)
              .join('\n'),
          );
        }
        if (Object.keys(got).length === 0) failed = true;
      }
    }
    const rows = [['figure', 'target', `A median`, `B median`, 'B / A', 'A verdict', 'B verdict']];
    const mark = (ok: boolean | null) => (ok === null ? '-' : ok ? 'met' : 'MISSED');
    for (const figure of BENCHES[bench]) {
      const values = (side: string) =>
        figures
          .get(side)!
          .map((f) => f[figure.key])
          .filter((v): v is number => v !== undefined);
      const a = median(values('A'));
      const b = median(values('B'));
      if (!Number.isFinite(a) && !Number.isFinite(b)) continue;
      const target = figure.min !== undefined ? `≥ ${figure.min}` : figure.max !== undefined ? `< ${figure.max}` : '-';
      const okB = meets(figure, b);
      if (okB === false) failed = true;
      const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(figure.key.endsWith('_ms') ? 1 : 2) : '-');
      rows.push([
        figure.label,
        target,
        fmt(a),
        fmt(b),
        Number.isFinite(a) && Number.isFinite(b) && a !== 0 ? (b / a).toFixed(2) : '-',
        mark(meets(figure, a)),
        mark(okB),
      ]);
    }
    console.log(`\nmedians of ${rounds} round(s), A = ${sides[0].name}, B = working tree:\n${table(rows)}`);
    console.log(
      `load average at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    console.log(
      `BENCH_AB_RESULT ${JSON.stringify({ bench, parts: parts ?? null, rev: asked, sha, rounds, A: figures.get('A'), B: figures.get('B') })}`,
    );
  } finally {
    cleanup();
  }
  process.exit(failed ? 1 : 0);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
