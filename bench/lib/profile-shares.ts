/**
 * The share of self time by part of the `POST /v1/jobs` path in a .cpuprofile (what
 * BENCH_CPU_PROF writes, or node --cpu-prof):
 *
 *   npx tsx bench/lib/profile-shares.ts <file.cpuprofile> [--top N]
 *
 * Each sample goes to the first frame, from the leaf up, whose script or function names a part
 * (a native frame such as JSON.stringify or a hash goes to the caller that asked for it); a sample
 * no frame names is `other`. Idle time is left out of the shares (and printed beside them).
 * `--top N` also lists the N functions with the most self time.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The parts, in the order they are tried on each frame. */
export const PARTS: Array<{ part: string; test: (url: string, fn: string) => boolean }> = [
  {
    part: 'validation (express-openapi-validator, ajv)',
    test: (u) => /node_modules\/(express-openapi-validator|ajv|ajv-formats)\//.test(u) || /apps\/api\/src\/middleware\/input\.ts/.test(u),
  },
  {
    part: 'auth and key lookup',
    test: (u) =>
      /apps\/api\/src\/middleware\/(auth|access|tenant|session-cookie)\.ts|domain\/src\/workspaces\/(key-lookup|key-use|api-keys)\.ts|domain\/src\/oauth\//.test(
        u,
      ),
  },
  { part: 'caps and spend counters', test: (u) => /domain\/src\/credits\/(counters|usage)\.ts|domain\/src\/billing\//.test(u) },
  {
    part: 'admission (plan, quote, flush)',
    test: (u) => /domain\/src\/(admission\/|group-commit\.ts|credits\/(reservations|balances)\.ts)/.test(u),
  },
  {
    part: 'logging (pino)',
    test: (u) =>
      /node_modules\/(pino|pino-http|pino-std-serializers|sonic-boom|fast-redact)\/|middleware\/access-log\.ts|packages\/logging\//.test(u),
  },
  {
    part: 'enqueue (bullmq, ioredis)',
    test: (u) =>
      /node_modules\/(bullmq|ioredis|msgpackr|redis-parser|cluster-key-slot)\/|domain\/src\/jobs\/enqueue\.ts|packages\/queue\//.test(u),
  },
  {
    part: 'Postgres client (pg, kysely)',
    test: (u) => /node_modules\/(pg|pg-pool|pg-protocol|pg-types|postgres-[a-z]+|kysely)\/|packages\/db\//.test(u),
  },
  {
    part: 'serialization (body parsing, JSON responses)',
    test: (u) =>
      /node_modules\/(body-parser|raw-body|iconv-lite|express\/lib\/response\.js)|express\/lib\/response\.js|domain\/src\/jobs\/render\.ts|api\/src\/.*render/.test(
        u,
      ),
  },
  { part: 'rate limiter', test: (u) => /middleware\/rate-limit\.ts/.test(u) },
  {
    part: 'HTTP server, Express routing and middleware',
    test: (u) =>
      /^node:(_http|http|net|stream|internal\/(http|streams|stream_base))|node_modules\/(express|router|on-finished|finalhandler|send|qs|cookie|vary|cors|compression)\/|apps\/api\/src\/(middleware|app)/.test(
        u,
      ),
  },
  { part: 'job creation (routes, createJob, catalog)', test: (u) => /apps\/api\/src\/routes\/|domain\/src\/jobs\//.test(u) },
  { part: 'garbage collection', test: (_u, fn) => fn === '(garbage collector)' },
];

export function shares(profile: Profile): { total: number; idle: number; byPart: Map<string, number>; byFunction: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const partOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = partOf.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const hit = PARTS.find((p) => p.test(node.callFrame.url, node.callFrame.functionName));
    const up = parent.get(id);
    const part = hit ? hit.part : up === undefined ? 'other' : classify(up);
    partOf.set(id, part);
    return part;
  };
  const byPart = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') {
      idle += dt;
      return;
    }
    total += dt;
    const part = classify(id);
    byPart.set(part, (byPart.get(part) ?? 0) + dt);
    const where = node.callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*\/(apps|packages)\//, '$1/');
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${where}${where ? `:${node.callFrame.lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + dt);
  });
  return { total, idle, byPart, byFunction };
}

function main(): void {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--'));
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args[topAt + 1] ?? 20) : 0;
  if (!file) {
    console.error('usage: tsx bench/lib/profile-shares.ts <file.cpuprofile> [--top N]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const { total, idle, byPart, byFunction } = shares(profile);
  const pct = (x: number) => `${((100 * x) / total).toFixed(1).padStart(5)} %`;
  console.log(`${file}: ${(total / 1e6).toFixed(2)} s of CPU sampled, ${(idle / 1e6).toFixed(2)} s idle (left out)`);
  const all = new Map([...PARTS.map((p) => [p.part, 0] as [string, number]), ['other', 0]]);
  for (const [part, t] of byPart) all.set(part, t);
  for (const [part, t] of [...all].sort((a, b) => b[1] - a[1])) console.log(`  ${pct(t)}  ${part}`);
  if (top > 0) {
    console.log(`\ntop ${top} functions by self time:`);
    for (const [fn, t] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)}  ${fn}`);
  }
}

if (require.main === module) main();
