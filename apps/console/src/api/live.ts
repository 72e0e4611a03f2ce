import { useQuery, useQueryClient } from '@tanstack/react-query';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { useEffect, useMemo, useState } from 'react';
import { api, type Batch, currentWorkspaceId, type Job, sessionHeaders, unwrap } from './client';
import { isTerminal } from './jobs';

/**
 * Reads a text/event-stream response (extensions.md 6) and calls `onEvent` with each event's
 * name and parsed data (`onOpen` once the stream is open). Resolves when the stream ends; rejects
 * if it cannot be opened or breaks. fetch, not EventSource: the request must carry X-Workspace-ID.
 * The stream is parsed by eventsource-parser, the parser the SDK uses too.
 */
export async function readEventStream(
  path: string,
  signal: AbortSignal,
  onEvent: (event: string, data: unknown) => void,
  onOpen?: () => void,
): Promise<void> {
  const response = await fetch(path, { headers: { ...sessionHeaders(), Accept: 'text/event-stream' }, credentials: 'same-origin', signal });
  if (!response.ok || !response.body || !(response.headers.get('Content-Type') ?? '').startsWith('text/event-stream')) {
    throw new Error(`no event stream (${response.status})`);
  }
  onOpen?.();
  const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  for (;;) {
    const { value, done } = await events.read();
    if (done) return;
    let data: unknown;
    try {
      data = JSON.parse(value.data);
    } catch {
      // A malformed event is skipped; the next one carries the whole state again.
      continue;
    }
    onEvent(value.event ?? 'message', data);
  }
}

export type LiveMode = 'connecting' | 'stream' | 'polling' | 'done';

/**
 * A resource that changes while it runs (a job or a batch): read once, then kept current by its
 * event stream (and read again every 10 s, should an event be lost); if the stream cannot be
 * had or breaks (a network error, a proxy that cuts it), by polling every second until it is
 * terminal. `mode` is 'stream' only once the stream is open.
 */
function useLive<T extends { status: string }>(
  kind: 'jobs' | 'batches',
  id: string,
  fetchOne: () => Promise<T>,
  strip: (fresh: T, old: T | undefined) => T,
) {
  const queryClient = useQueryClient();
  const workspaceId = currentWorkspaceId();
  const key = useMemo(() => [workspaceId, kind, id], [workspaceId, kind, id]);
  const [mode, setMode] = useState<LiveMode>('connecting');
  const query = useQuery({
    queryKey: key,
    queryFn: fetchOne,
    // Polling when there is no stream; with one, a slow read now and then, should an event be lost.
    refetchInterval: (q) => (!q.state.data || isTerminal(q.state.data.status) ? false : mode === 'polling' ? 1000 : 10_000),
  });
  const loaded = query.data !== undefined;
  const terminal = query.data ? isTerminal(query.data.status) : false;
  // Opened once per resource while it runs (not at each change of its data): the stream carries every change after the first read.
  useEffect(() => {
    if (!loaded || terminal) {
      if (terminal) setMode('done');
      return;
    }
    const controller = new AbortController();
    readEventStream(
      `/v1/${kind}/${encodeURIComponent(id)}/events`,
      controller.signal,
      (_event, data) => {
        queryClient.setQueryData<T>(key, (old) => strip(data as T, old));
      },
      () => setMode('stream'),
    )
      .then(() => void queryClient.invalidateQueries({ queryKey: key }))
      .catch(() => {
        if (!controller.signal.aborted) setMode('polling');
      });
    return () => controller.abort();
  }, [queryClient, kind, id, key, strip, loaded, terminal]);
  return { ...query, mode, queryKey: key };
}

/** Events carry a job without its result; the result is read again at the end. */
const keepJobResult = (fresh: Job, old: Job | undefined): Job => ({ ...old, ...fresh, result: fresh.result ?? old?.result ?? null });
const keepBatchJobs = (fresh: Batch, old: Batch | undefined): Batch => ({ ...old, ...fresh, jobs: fresh.jobs ?? old?.jobs });

/** A job kept current (events carry it without its result; the result is read again at the end). */
export function useLiveJob(jobId: string) {
  return useLive<Job>('jobs', jobId, () => unwrap(api.GET('/v1/jobs/{job_id}', { params: { path: { job_id: jobId } } })), keepJobResult);
}

export function useLiveBatch(batchId: string) {
  return useLive<Batch>(
    'batches',
    batchId,
    () => unwrap(api.GET('/v1/batches/{batch_id}', { params: { path: { batch_id: batchId } } })),
    keepBatchJobs,
  );
}
