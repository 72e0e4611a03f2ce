import { sql } from 'kysely';
import type { Db, Executor, JobRow, Tx } from '@sdx/db';
import { readBalancesWith } from '../credits/balances';
import type { Resources } from '../resources';
import { periodStartOf } from '../time';
import type { AdmissionState, KeyState, Submission } from './plan';

/**
 * What the planner (plan.ts) decides from, read for a group of submissions (admit.ts, step 2)
 * or for a quote (quote.ts): the workspaces' balances (locked, or peeked at), their active-job
 * counts, the reusable twins of single jobs and the month's spend of capped API keys, all sent
 * in one round trip.
 */

/**
 * Step 2: the balance locks, then the active counts and reusable twins, in one round trip.
 * `peek` reads the same without locking or writing (a quote): rollovers are applied in memory.
 */
export async function readAdmissionState(
  services: Pick<Resources, 'config'>,
  db: Tx | Db,
  items: readonly Submission[],
  keys: KeyState[],
  now: Date,
  mode: 'lock' | 'peek' = 'lock',
): Promise<AdmissionState> {
  const pending = items.filter((_, i) => keys[i].kind === 'none' || keys[i].kind === 'claimed' || keys[i].kind === 'held');
  const workspaces = [...new Map(pending.map((s) => [s.tenant.workspace.id, s.tenant.workspace])).values()];
  if (workspaces.length === 0) return { balances: new Map(), active: new Map(), reusable: new Map(), keys, keySpend: new Map() };
  const requests = [
    ...new Map(
      pending
        .filter((s) => s.batchId === null)
        .map(
          (s) =>
            [`${s.tenant.workspace.id}\u0000${s.targets[0].key}`, { workspaceId: s.tenant.workspace.id, key: s.targets[0].key }] as const,
        ),
    ).values(),
  ];
  const ids = workspaces.map((w) => w.id);
  const counts = activeJobCounts(db, ids);
  const cacheFrom = new Date(now.getTime() - services.config.cacheTtlSeconds * 1000);
  // The keys' caps and month's spend, for the keys that had a cap when their request was
  // authenticated (Tenant.keyCapped): an uncapped key has nothing to check. A cap set after
  // that applies from the key's next request, as if this one had been admitted a moment earlier.
  const keyIds = [...new Set(pending.flatMap((s) => (s.tenant.keyId === null || s.tenant.keyCapped === false ? [] : [s.tenant.keyId])))];
  const twins = requests.length > 0 ? reusableTwins(db, requests, cacheFrom) : null;
  const spends = keyIds.length > 0 ? keySpendOf(db, keyIds, periodStartOf(now)) : null;
  const [balances, actives, ...rest] = await readBalancesWith(
    db,
    workspaces,
    now,
    mode,
    counts,
    ...[twins, spends].filter((q) => q !== null),
  );
  const found = (twins ? rest.shift() : []) as JobRow[];
  const spent = (spends ? rest.shift() : []) as unknown as KeySpendRow[];
  return {
    balances,
    active: new Map(actives.map((row) => [row.workspace_id, row.n])),
    reusable: byWorkspaceAndKey(found),
    keys,
    keySpend: new Map(spent.map((row) => [row.id, { cap: row.cap, spent: row.spent, alerted: row.alerted }])),
  };
}

interface KeySpendRow {
  id: string;
  cap: number | null;
  spent: number;
  alerted: boolean;
}

/** The keys' monthly caps and their spend in `period` (a row of an older period counts nothing), as a statement to send with others. */
function keySpendOf(db: Executor, keyIds: readonly string[], period: string) {
  return sql<KeySpendRow>`
    select k.id, k.monthly_credit_cap as cap,
           coalesce(case when s.period_start = ${period}::date then s.spent end, 0) as spent,
           coalesce(s.period_start = ${period}::date and s.cap_alerted, false) as alerted
    from api_keys k left join api_key_spend s on s.key_id = k.id
    where k.id = any(${keyIds}::text[])
  `.compile(db);
}

/** Active (queued or running) jobs per workspace, as a statement to send with others. */
function activeJobCounts(db: Executor, workspaceIds: readonly string[]) {
  return sql<{ workspace_id: string; n: number }>`
    select workspace_id, count(*)::int as n
    from jobs
    where workspace_id = any(${[...new Set(workspaceIds)]}::text[]) and status in ('queued', 'running')
    group by workspace_id
  `.compile(db);
}

/**
 * For each (workspace, request key): the queued or running twin, else the latest completed
 * job (not itself a cache hit, its result still kept) finished after `cacheFrom`. A statement
 * to send with others.
 */
function reusableTwins(db: Executor, requests: ReadonlyArray<{ workspaceId: string; key: string }>, cacheFrom: Date) {
  return sql<JobRow>`
    select j.*
    from unnest(${requests.map((r) => r.workspaceId)}::text[], ${requests.map((r) => r.key)}::text[]) as k(workspace_id, request_key)
    cross join lateral (
      (select * from jobs
        where workspace_id = k.workspace_id and request_key = k.request_key and status in ('queued', 'running')
        limit 1)
      union all
      (select * from jobs
        where workspace_id = k.workspace_id and request_key = k.request_key and status = 'completed' and not cached
          and finished_at > ${cacheFrom} and not result_expired
        order by finished_at desc
        limit 1)
      limit 1
    ) j
  `.compile(db);
}

/** Twins by workspace, then request key. */
function byWorkspaceAndKey(jobs: readonly JobRow[]): Map<string, Map<string, JobRow>> {
  const map = new Map<string, Map<string, JobRow>>();
  for (const job of jobs) {
    const inWorkspace = map.get(job.workspace_id) ?? new Map<string, JobRow>();
    inWorkspace.set(job.request_key, job);
    map.set(job.workspace_id, inWorkspace);
  }
  return map;
}
