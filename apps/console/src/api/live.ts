import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, type Batch, currentWorkspaceId, type Job, sessionHeaders, unwrap } from './client';
import { isTerminal } from './jobs';

/**
 * Reads a text/event-stream response (extensions.md 6) and calls `onEvent` with each event's
 * name and parsed data (`onOpen` once the stream is open). Resolves when the stream ends; rejects
 * if it cannot be opened or breaks. fetch, not EventSource: the request must carry X-Workspace-ID.
 */
export async function readEventStream(path: string, signal: AbortSignal, onEvent: (event: string, data: unknown) => void, onOpen?: () => void): Promise<void> {
  const response = await fetch(path, { headers: { ...sessionHeaders(), Accept: 'text/event-stream' }, credentials: 'same-origin', signal });
  if (!response.ok || !response.body || !(response.headers.get('Content-Type') ?? '').startsWith('text/event-stream')) {
    throw new Error(`no event stream (${response.status})`);
  }
  onOpen?.();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = text;
        else if (field === 'data') data.push(text);
      }
      if (data.length === 0) continue;
      try {
        onEvent(event, JSON.parse(data.join('\n')));
      } catch {
        // A malformed event is skipped; the next one carries the whole state again.
      }
    }
  }
}

export type LiveMode = 'connecting' | 'stream' | 'polling' | 'done';

/**
 * A resource that changes while it runs (a job or a batch): read once, then kept current by its
 * event stream (and read again every 10 s, should an event be lost); if the stream cannot be
 * had or breaks (a network error, a proxy that cuts it), by polling every second until it is
 * terminal. `mode` is 'stream' only once the stream is open.
 */
function useLive<T extends { status: string }>(kind: 'jobs' | 'batches', id: string, fetchOne: () => Promise<T>, strip: (fresh: T, old: T | undefined) => T) {
  const queryClient = useQueryClient();
  const key = [currentWorkspaceId(), kind, id];
  const [mode, setMode] = useState<LiveMode>('connecting');
  const query = useQuery({
    queryKey: key,
    queryFn: fetchOne,
    // Polling when there is no stream; with one, a slow read now and then, should an event be lost.
    refetchInterval: (q) => (!q.state.data || isTerminal(q.state.data.status) ? false : mode === 'polling' ? 1000 : 10_000),
  });
  const terminal = query.data ? isTerminal(query.data.status) : false;
  useEffect(() => {
    if (!query.data || terminal) {
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
    // Opened once per resource while it runs; the stream carries every change after that.
  }, [id, Boolean(query.data), terminal]);
  return { ...query, mode, queryKey: key };
}

/** A job kept current (events carry it without its result; the result is read again at the end). */
export function useLiveJob(jobId: string) {
  return useLive<Job>(
    'jobs',
    jobId,
    () => unwrap(api.GET('/v1/jobs/{job_id}', { params: { path: { job_id: jobId } } })),
    (fresh, old) => ({ ...old, ...fresh, result: fresh.result ?? old?.result ?? null }),
  );
}

export function useLiveBatch(batchId: string) {
  return useLive<Batch>(
    'batches',
    batchId,
    () => unwrap(api.GET('/v1/batches/{batch_id}', { params: { path: { batch_id: batchId } } })),
    (fresh, old) => ({ ...old, ...fresh, jobs: fresh.jobs ?? old?.jobs }),
  );
}
