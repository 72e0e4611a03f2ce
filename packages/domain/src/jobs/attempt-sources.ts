import type { Db, JobRow } from '@sdx/db';
import type { ExtractionRequest, Page, Provider, SourceReport } from '@sdx/providers';
import type { Resources } from '../resources';
import { recordSourceHealth } from '../sources/health';

/**
 * The live sources each attempt of a job tried (table job_attempt_sources): what
 * GET /v1/jobs/{id} shows as `attempt_sources`. A live provider reports each source it tried
 * (`onSource`, packages/providers fallback.ts); the sandbox reports none, so its attempts write
 * nothing here.
 */
export interface AttemptSource {
  attempt: number;
  source: SourceReport['source'];
  provider: string;
  outcome: SourceReport['outcome'];
  error_code: string | null;
  at: string;
}

/**
 * The pages of `provider` for `request`. For a live provider, the sources the attempt tried are
 * written once the extraction ends (delivered, failed or stopped), with the sources' health
 * (sources/health.ts); a failed write is logged,
 * never the attempt's failure (the record is an account of the attempt, not part of its result).
 * The sandbox's pages are passed on as they are: no wrapper, no write.
 */
export function extractRecorded(
  services: Pick<Resources, 'db' | 'log' | 'clock'>,
  job: Pick<JobRow, 'id' | 'attempts'>,
  provider: Provider,
  request: ExtractionRequest,
): AsyncIterable<Page> {
  if (provider.source !== 'official' && provider.source !== 'vendor') return provider.extract(request);
  return recorded(services, job, provider, request);
}

async function* recorded(
  services: Pick<Resources, 'db' | 'log' | 'clock'>,
  job: Pick<JobRow, 'id' | 'attempts'>,
  provider: Provider,
  request: ExtractionRequest,
): AsyncGenerator<Page> {
  const reports: SourceReport[] = [];
  try {
    yield* provider.extract({ ...request, onSource: (report) => reports.push(report) });
  } finally {
    if (reports.length > 0) {
      await recordAttemptSources(services.db, job.id, job.attempts, reports)
        .then(() => recordSourceHealth(services, reports))
        .catch((err: unknown) => services.log.warn({ err }, 'the sources of the attempt were not recorded'));
    }
  }
}

export async function recordAttemptSources(db: Db, jobId: string, attempt: number, reports: readonly SourceReport[]): Promise<void> {
  await db
    .insertInto('job_attempt_sources')
    .values(
      reports.map((r, seq) => ({
        job_id: jobId,
        attempt,
        seq,
        source: r.source,
        provider: r.provider,
        outcome: r.outcome,
        error_code: r.error_code,
      })),
    )
    .onConflict((oc) => oc.columns(['job_id', 'attempt', 'seq']).doNothing())
    .execute();
}

/** Every source tried by the job's attempts, in order. */
export async function attemptSourcesOf(db: Db, jobId: string): Promise<AttemptSource[]> {
  const rows = await db
    .selectFrom('job_attempt_sources')
    .select(['attempt', 'source', 'provider', 'outcome', 'error_code', 'created_at'])
    .where('job_id', '=', jobId)
    .orderBy('attempt')
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({
    attempt: r.attempt,
    source: r.source as AttemptSource['source'],
    provider: r.provider,
    outcome: r.outcome as AttemptSource['outcome'],
    error_code: r.error_code,
    at: r.created_at.toISOString(),
  }));
}
