import { createHash } from 'node:crypto';
import type { Response } from 'express';
import type { JobRow } from '@sdx/db';
import { type JobFlags, type PageCount, pageCountsOf, renderJob, resultJson, resultSourceId, type Services } from '@sdx/domain/api';
import { pipeTo } from '@sdx/exports';

/**
 * Job responses with their results streamed: the job's fields, then `result` written slice by
 * slice as it is read from job_result_pages (resultJson), each write waiting for the socket to
 * drain. A slow client holds one slice in this process, never the whole result; no
 * whole-result string is ever built.
 *
 * The first slice is read before anything is written, so a database failure at the start is
 * still answered as a JSON error; a failure after the first byte cuts the connection (the
 * error renderer), so a truncated body is never passed off as whole.
 */

/**
 * The JSON text of one job, in chunks: its fields, then its result slice by slice. Without
 * `withResult` (a list asked with include_result=false), or once the result has expired, the
 * job is rendered with `result` null and nothing is read.
 */
export async function* jobChunks(
  services: Services,
  job: JobRow,
  flags: JobFlags,
  withResult = true,
  counts?: PageCount[],
): AsyncGenerator<string> {
  if (job.status !== 'completed' || job.result_expired || !withResult) {
    yield JSON.stringify(renderJob(job, null, flags));
    return;
  }
  const { result: _placeholder, ...fields } = renderJob(job, null, flags);
  const head = JSON.stringify(fields);
  yield `${head.slice(0, -1)},"result":`;
  yield* resultJson(services, job, counts);
  yield '}';
}

/**
 * Writes `chunks` to `out` with stream.pipeline: the next chunk is read only once `out` has taken
 * the last one (waiting for 'drain' when its buffer is full); then ends `out`.
 */
export async function writeAll(out: NodeJS.WritableStream, chunks: AsyncIterable<string>): Promise<void> {
  await pipeTo(chunks, out);
}

/** Answers `status` with one job, its result streamed. */
export async function sendJob(
  res: Response,
  services: Services,
  job: JobRow,
  flags: JobFlags = {},
  status = 200,
  withResult = true,
): Promise<void> {
  await send(res, status, jobChunks(services, job, flags, withResult));
}

/**
 * Answers 200 with a JSON array of jobs, each result streamed in turn (or none: `withResult`
 * false). The page counts of every listed result are read first, in one query.
 */
export async function sendJobs(res: Response, services: Services, jobs: readonly JobRow[], withResult = true): Promise<void> {
  async function* chunks(): AsyncGenerator<string> {
    const withResults = withResult
      ? jobs.filter((job) => job.status === 'completed' && !job.result_expired && job.include_posts === 0)
      : [];
    const counts = await pageCountsOf(services.db, withResults);
    yield '[';
    for (const [index, job] of jobs.entries()) {
      if (index > 0) yield ',';
      yield* jobChunks(services, job, {}, withResult, counts.get(resultSourceId(job)));
    }
    yield ']';
  }
  await send(res, 200, chunks());
}

/**
 * Answers `status` with JSON text written chunk by chunk (see the top of this file), or at once
 * when the chunks read before the status line were all there was.
 */
export async function send(res: Response, status: number, chunks: AsyncGenerator<string>): Promise<void> {
  // Up to the first slice of a result before the status line goes out, and on while what is
  // read stays under WRITE_BYTES: a small answer is then read whole.
  const prefix: string[] = [];
  let size = 0;
  let next = await chunks.next();
  while (!next.done && (prefix.length < 3 || size < WRITE_BYTES)) {
    prefix.push(next.value);
    size += next.value.length;
    next = await chunks.next();
  }
  res.status(status);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (next.done) {
    // The whole answer was read with its first chunks (a job without a result, or with a small
    // one): one write with its length, as any other JSON answer goes, rather than a stream.
    const body = prefix.join('');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
    return;
  }
  async function* all(): AsyncGenerator<string> {
    yield* prefix;
    for (let rest = next; !rest.done; rest = await chunks.next()) yield rest.value;
  }
  await writeAll(res, coalesced(all()));
}

/** Writes smaller than this are joined with the next ones (a slice of a result is larger and goes alone). */
const WRITE_BYTES = 16_384;

/**
 * Joins consecutive small chunks until they reach WRITE_BYTES: a page of 25 jobs with small
 * results goes out in a write or two rather than a hundred (each a chunk of the response, and
 * a pass through the compressor). A chunk is held only until the next one is read; no more than
 * one slice of a result is ever held.
 */
async function* coalesced(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let parts: string[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    parts.push(chunk);
    size += chunk.length;
    if (size >= WRITE_BYTES) {
      yield parts.join('');
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) yield parts.join('');
}

/**
 * The job's ETag, weak (the bytes differ with the content encoding): a digest of its rendered
 * fields and of where its result is read from. A completed job's stored result never changes
 * (its expiry is one of the fields), so the fields stand for the whole answer; anything that
 * changes the job (status, progress, heartbeat, settlement, expiry) changes the tag.
 */
export function jobETag(job: JobRow, withResult = true): string {
  // The job without its result (include_result=false) is another representation: another tag.
  const digest = createHash('sha256')
    .update(JSON.stringify(renderJob(job, null)))
    .update(withResult ? resultSourceId(job) : 'no-result')
    .digest('base64url');
  return `W/"${digest.slice(0, 22)}"`;
}

/** Whether an If-None-Match header (one tag, a comma-separated list, or *) names `etag`, compared weakly. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}
