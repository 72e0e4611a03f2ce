import { readEvents } from './sse';
import { abortableSleep } from './transport';

/**
 * Following a job or a batch to its end: the live event stream first (`GET .../events`, one
 * event at each change of status or progress), and polling `GET` when the stream cannot be had
 * (the service answers 404 or 405 for it, the connection fails, or it ends before the terminal
 * state). Polling starts fast and slows to `pollIntervalMs`.
 */

export interface WaitOptions<T> {
  /** Called with each new state (status or progress changed). */
  onProgress?: (state: T) => void;
  /** Stops waiting (the job or batch keeps running on the service). */
  signal?: AbortSignal;
  /** Longest wait between two polls when there is no event stream (ms, default 2000). */
  pollIntervalMs?: number;
  /** false: poll only, without trying the event stream. */
  stream?: boolean;
}

export interface Followed {
  id: string;
  status: string;
}

export interface FollowSource<T extends Followed> {
  open(signal?: AbortSignal): Promise<ReadableStream<Uint8Array>>;
  get(signal?: AbortSignal): Promise<T>;
  isTerminal(state: T): boolean;
  /** What counts as a change worth reporting. */
  fingerprint(state: T): string;
}

export async function follow<T extends Followed>(source: FollowSource<T>, options: WaitOptions<T> = {}): Promise<T> {
  const { signal, onProgress } = options;
  let lastPrint: string | undefined;
  const report = (state: T) => {
    const print = source.fingerprint(state);
    if (print === lastPrint) return;
    lastPrint = print;
    onProgress?.(state);
  };

  if (options.stream !== false) {
    const ended = await fromStream(source, report, signal);
    // The events carry no result: the terminal state is read once, whole.
    if (ended) {
      const final = await source.get(signal);
      report(final);
      return final;
    }
  }

  const ceiling = options.pollIntervalMs ?? 2_000;
  for (let delay = Math.min(250, ceiling); ; delay = Math.min(ceiling, delay * 2)) {
    const state = await source.get(signal);
    report(state);
    if (source.isTerminal(state)) return state;
    await abortableSleep(delay, signal);
  }
}

/** True when the stream reached the terminal state; false when polling must take over. */
async function fromStream<T extends Followed>(source: FollowSource<T>, report: (state: T) => void, signal?: AbortSignal): Promise<boolean> {
  try {
    const body = await source.open(signal);
    for await (const event of readEvents(body)) {
      // `status` and `progress` events carry the state; anything else without one is skipped.
      const state = parseState<T>(event.data);
      if (!state) continue;
      report(state);
      if (source.isTerminal(state)) return true;
    }
    return false;
  } catch (error) {
    if (signal?.aborted) throw signal.reason ?? error;
    return false;
  }
}

function parseState<T extends Followed>(data: string): T | null {
  try {
    const value = JSON.parse(data) as Partial<T> | null;
    return value && typeof value === 'object' && typeof value.status === 'string' ? (value as T) : null;
  } catch {
    return null;
  }
}
