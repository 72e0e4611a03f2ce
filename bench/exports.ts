/**
 * Export benchmark: 25,000 post items written as json, csv and xlsx, each to a file in the
 * system temp directory, against a baseline of JSON.stringify of the same items written in
 * one go. Reports wall time, the ratio to the baseline, and peak RSS growth (sampled every
 * 10 ms, plus once after each synchronous step) for each.
 *
 * Targets: csv within 3x of the baseline time; xlsx peak RSS growth under 150 MB.
 *
 * Then the stored path, as GET /v1/jobs/{id}/export?format=csv reads it: the same items stored
 * as a job's result in pages of 100, once in Postgres rows (RESULT_STORE=postgres) and once as
 * objects of a loopback S3 (RESULT_STORE=s3, s3rver in this parent process), each exported to csv
 * through jobExportRows. Targets: the object store's csv within 2x the Postgres store's, in this
 * run; peak RSS growth under 150 MB for each.
 * Each measurement runs in its own child process (forked from this script, in this run)
 * so memory one phase freed but the allocator kept cannot hide another phase's growth.
 * In the child, the items are generated and a warm-up pass over 2,000 items runs first
 * so each path is measured compiled, not cold; then the phase runs 3 times and reports
 * the median time (the host is shared, so single timings are noisy) and the highest peak
 * RSS growth. Exits with code 1 when a target is missed.
 *
 * Run: npm run bench:exports
 */
import { fork } from 'child_process';
import { createWriteStream, promises as fsp } from 'fs';
import os from 'os';
import path from 'path';
import v8 from 'v8';
import vm from 'vm';
import type { PostItem } from '@sdx/providers/src/types';
import { type ExportRow, writeCsv, writeJson, writeXlsx } from '@sdx/exports';
import { sql } from 'kysely';
import { createDb, type Db } from '@sdx/db';
import { BucketResultObjects, jobExportRows, type ResultAccess } from '@sdx/domain/testing';
import { type LoopbackS3, startLoopbackS3 } from '@sdx/testing';
import { createBenchDatabase } from './lib/db';

const ITEM_COUNT = 25_000;
const WARMUP_COUNT = 2_000;
const REPEATS = 3;
const PAGE_SIZE = 100;
const SAMPLE_MS = 10;
const CSV_MAX_RATIO = 3;
const XLSX_MAX_RSS_MB = 150;
const STORED_MAX_RATIO = 2;
const STORED_MAX_RSS_MB = 150;
const BUCKET = 'sdx-bench-results';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const WORDS = [
  'summer',
  'launch',
  'coffee',
  'travel',
  'sunset',
  'new',
  'drop',
  'studio',
  'behind',
  'the',
  'scenes',
  'with',
  'friends',
  'today',
  'café',
  'naïve',
  'über',
  '🔥',
  '✨',
  '"quoted"',
  'a,b',
];

function rand(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 0x1_0000_0000;
  };
}

function makeItems(count: number): PostItem[] {
  const r = rand(42);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)];
  const items: PostItem[] = [];
  for (let i = 0; i < count; i++) {
    const hashtags = Array.from({ length: 1 + Math.floor(r() * 6) }, () => pick(WORDS).replace(/[^\p{L}]/gu, '') || 'tag');
    const words = Array.from({ length: 8 + Math.floor(r() * 40) }, () => pick(WORDS));
    const caption = `${words.join(' ')}${r() < 0.2 ? '\nsecond line' : ''} ${hashtags.map((h) => `#${h}`).join(' ')}`;
    const video = r() < 0.3;
    items.push({
      kind: 'post',
      platform: 'instagram',
      id: String(3_000_000_000_000_000_000n + BigInt(i)),
      username: `creator_${i % 500}`,
      caption,
      url: `https://www.instagram.com/p/C${i.toString(36).padStart(10, 'x')}/`,
      published_at: new Date(Date.UTC(2024, 0, 1) + i * 3_600_000).toISOString(),
      title: null,
      media_type: video ? 'video' : pick(['image', 'carousel']),
      duration_seconds: video ? Math.round(r() * 900) / 10 : null,
      hashtags,
      collaborator_usernames: r() < 0.1 ? [`creator_${(i + 7) % 500}`] : [],
      metrics: {
        views: video ? Math.floor(r() * 2_000_000) : null,
        likes: Math.floor(r() * 150_000),
        comments: Math.floor(r() * 4_000),
        shares: r() < 0.5 ? Math.floor(r() * 900) : null,
      },
    });
  }
  return items;
}

// eslint-disable-next-line @typescript-eslint/require-await -- the writers read an async source; these rows are in memory already
async function* pages<T>(list: readonly T[]): AsyncGenerator<T[]> {
  for (let i = 0; i < list.length; i += PAGE_SIZE) yield list.slice(i, i + PAGE_SIZE);
}

interface Measurement {
  name: string;
  ms: number;
  peakMb: number;
  rows: number;
  bytes: number;
}

type Run = (file: string, sample: () => void) => Promise<number>;

async function measure(name: string, ext: string, run: Run): Promise<Measurement> {
  const file = path.join(os.tmpdir(), `sdx-bench-exports-${process.pid}-${name}.${ext}`);
  gc();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sample = (): void => {
    const rss = process.memoryUsage().rss;
    if (rss > peak) peak = rss;
  };
  const timer = setInterval(sample, SAMPLE_MS);
  const started = process.hrtime.bigint();
  let rows: number;
  try {
    rows = await run(file, sample);
  } finally {
    clearInterval(timer);
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  sample();
  const { size } = await fsp.stat(file);
  await fsp.unlink(file);
  return { name, ms, peakMb: (peak - before) / 1024 / 1024, rows, bytes: size };
}

const PHASES = ['baseline', 'json', 'csv', 'xlsx', 'csv-postgres', 'csv-s3'] as const;
type Phase = (typeof PHASES)[number];

/** Where the stored phases' results are: the database and the loopback S3 (set by the parent). */
function storedAccess(): { db: Db; access: ResultAccess; close(): Promise<void> } {
  const db = createDb({ connectionString: process.env.BENCH_EXPORTS_DB!, max: 2 });
  const resultObjects = BucketResultObjects.of({
    endpoint: process.env.BENCH_EXPORTS_S3!,
    bucket: BUCKET,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
  });
  return {
    db,
    access: { db, resultObjects },
    async close() {
      resultObjects.close();
      await db.destroy();
    },
  };
}

function runPhase(phase: Phase, items: PostItem[]): Promise<Measurement> {
  const rows: ExportRow[] = items.map((item) => ({ item }));
  const tabular = { contextColumns: [], itemKinds: ['post' as const] };
  switch (phase) {
    case 'baseline':
      return measure(phase, 'json', async (file, sample) => {
        const text = JSON.stringify(items);
        sample();
        await fsp.writeFile(file, text);
        return items.length;
      });
    case 'json':
      return measure(phase, 'json', (file) => writeJson(pages(items), createWriteStream(file)));
    case 'csv':
      return measure(phase, 'csv', (file) => writeCsv(pages(rows), createWriteStream(file), tabular));
    case 'xlsx':
      return measure(phase, 'xlsx', (file) => writeXlsx(pages(rows), createWriteStream(file), tabular));
    case 'csv-postgres':
    case 'csv-s3':
      return measure(phase, 'csv', async (file) => {
        const stored = storedAccess();
        try {
          // The warm-up reads the job of WARMUP_COUNT items; the measured runs the whole one.
          const job = { id: `${phase === 'csv-s3' ? 'job_s3' : 'job_pg'}_${items.length}`, source_job_id: null };
          return await writeCsv(jobExportRows(stored.access, job), createWriteStream(file), tabular);
        } finally {
          await stored.close();
        }
      });
  }
}

/** Stores the items as the results of four jobs (whole and warm-up, in each store) in pages of PAGE_SIZE. */
async function storeResults(db: Db, s3: LoopbackS3): Promise<void> {
  const objects = BucketResultObjects.of({
    endpoint: s3.endpoint,
    bucket: BUCKET,
    region: s3.region,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    forcePathStyle: true,
  });
  await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_bench', 'bench', 10, 60, 100, 10)`.execute(
    db,
  );
  for (const count of [WARMUP_COUNT, ITEM_COUNT]) {
    const items = makeItems(count);
    for (const id of [`job_pg_${count}`, `job_s3_${count}`]) {
      await sql`
        insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status, max_attempts, credit_rate, results_per_credit, base_credits)
        values (${id}, 'ws_bench', 'instagram', 'posts', 'x', 'x', ${id}, ${count}, 'completed', 4, 1, 1, 0)`.execute(db);
      for (let at = 0, pageNo = 1; at < items.length; at += PAGE_SIZE, pageNo++) {
        const page = items.slice(at, at + PAGE_SIZE);
        if (id.startsWith('job_pg')) {
          await db
            .insertInto('job_result_pages')
            .values({ job_id: id, page_no: pageNo, item_count: page.length, items: JSON.stringify(page) })
            .execute();
        } else {
          const lines = (
            await sql<{
              line: string;
            }>`select e.value::text as line from jsonb_array_elements(${JSON.stringify(page)}::jsonb) with ordinality e(value, n) order by e.n`.execute(
              db,
            )
          ).rows.map((r) => r.line);
          const stored = await objects.put(id, pageNo, lines);
          await db
            .insertInto('job_result_pages')
            .values({
              job_id: id,
              page_no: pageNo,
              item_count: page.length,
              items: null,
              object_key: stored.key,
              stored_bytes: stored.bytes,
            })
            .execute();
        }
      }
    }
  }
  objects.close();
}

/** Child process: warm up, then measure one phase and send the result to the parent. */
async function child(phase: Phase): Promise<void> {
  await runPhase(phase, makeItems(WARMUP_COUNT));
  const items = makeItems(ITEM_COUNT);
  const runs: Measurement[] = [];
  for (let i = 0; i < REPEATS; i++) runs.push(await runPhase(phase, items));
  const times = runs.map((m) => m.ms).sort((a, b) => a - b);
  const result: Measurement = {
    ...runs[0],
    ms: times[Math.floor(times.length / 2)],
    peakMb: Math.max(...runs.map((m) => m.peakMb)),
  };
  await new Promise<void>((resolve, reject) => process.send!(result, (err: Error | null) => (err ? reject(err) : resolve())));
}

function inChild(phase: Phase): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const proc = fork(__filename, ['--phase', phase], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let result: Measurement | null = null;
    proc.on('message', (message) => {
      result = message as Measurement;
    });
    proc.on('error', reject);
    proc.on('exit', (code) => (result && code === 0 ? resolve(result) : reject(new Error(`${phase} phase exited with ${code}`))));
  });
}

async function main(): Promise<void> {
  const database = await createBenchDatabase('exports');
  const s3 = await startLoopbackS3([BUCKET]);
  const results: Measurement[] = [];
  const db = createDb({ connectionString: database.url, max: 2 });
  try {
    await storeResults(db, s3);
    await db.destroy();
    process.env.BENCH_EXPORTS_DB = database.url;
    process.env.BENCH_EXPORTS_S3 = s3.endpoint;
    for (const phase of PHASES) results.push(await inChild(phase));
  } finally {
    await db.destroy().catch(() => undefined);
    await s3.stop();
    await database.drop();
  }
  const baseline = results[0].ms;
  const [pgStore, s3Store] = [results[4], results[5]];

  const checks: Record<string, { target: string; ok: boolean }> = {
    csv: { target: `time <= ${CSV_MAX_RATIO}x baseline`, ok: results[2].ms <= CSV_MAX_RATIO * baseline },
    xlsx: { target: `peak RSS growth < ${XLSX_MAX_RSS_MB} MB`, ok: results[3].peakMb < XLSX_MAX_RSS_MB },
    'csv-postgres': { target: `peak RSS growth < ${STORED_MAX_RSS_MB} MB`, ok: pgStore.peakMb < STORED_MAX_RSS_MB },
    'csv-s3': {
      target: `time <= ${STORED_MAX_RATIO}x csv-postgres (${(s3Store.ms / pgStore.ms).toFixed(2)}x), peak RSS growth < ${STORED_MAX_RSS_MB} MB`,
      ok: s3Store.ms <= STORED_MAX_RATIO * pgStore.ms && s3Store.peakMb < STORED_MAX_RSS_MB,
    },
  };

  console.log(`exports benchmark: ${ITEM_COUNT} post items, pages of ${PAGE_SIZE}, median of ${REPEATS} runs, node ${process.version}`);
  const header = ['export', 'rows', 'size MB', 'ms', 'x baseline', 'peak RSS +MB', 'target', 'result'];
  const table = results.map((m) => [
    m.name,
    String(m.rows),
    (m.bytes / 1024 / 1024).toFixed(1),
    m.ms.toFixed(1),
    (m.ms / baseline).toFixed(2),
    m.peakMb.toFixed(1),
    checks[m.name]?.target ?? '-',
    checks[m.name] ? (checks[m.name].ok ? 'PASS' : 'FAIL') : '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of table) console.log(line(row));

  const failed = Object.entries(checks).filter(([, c]) => !c.ok);
  console.log(failed.length === 0 ? 'all targets met' : `targets missed: ${failed.map(([n]) => n).join(', ')}`);
  if (failed.length > 0) process.exitCode = 1;
}

const phaseArg = process.argv.indexOf('--phase');
const run = phaseArg >= 0 ? child(process.argv[phaseArg + 1] as Phase) : main();
run.catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
