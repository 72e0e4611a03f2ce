import cliProgress from 'cli-progress';
import type { Batch, Job } from '@sdx/sdk';
import type { Context } from './context';
import type { Output } from './output';

/**
 * The progress of a job or batch being waited for: a bar on stderr when it is a terminal, one
 * line per change of status otherwise, nothing with --json.
 */
export interface Progress<T> {
  update(state: T): void;
  stop(): void;
}

export function jobProgress(out: Output): Progress<Job> {
  return progress<Job>(out, 'results', (job) => ({
    value: job.progress_current,
    total: job.progress_total ?? job.requested_limit,
    status: job.status,
    label: job.id,
  }));
}

export function batchProgress(out: Output): Progress<Batch> {
  return progress<Batch>(out, 'targets', (batch) => ({
    value: batch.completed_count + batch.failed_count + batch.cancelled_count,
    total: batch.target_count,
    status: batch.status,
    label: batch.id,
  }));
}

interface Point {
  value: number;
  total: number;
  status: string;
  label: string;
}

function progress<T>(out: Output, unit: string, read: (state: T) => Point): Progress<T> {
  if (out.json || out.quiet) return { update: () => undefined, stop: () => undefined };
  if (!out.stderrIsTerminal) {
    let last = '';
    return {
      update(state) {
        const point = read(state);
        if (point.status === last) return;
        last = point.status;
        out.note(`${point.label} ${point.status}`);
      },
      stop: () => undefined,
    };
  }
  const c = out.errColors;
  const bar = new cliProgress.SingleBar(
    {
      stream: out.stderr,
      format: `${c.cyan('{bar}')} {percentage}% | {value}/{total} ${unit} | {status}`,
      barCompleteChar: '\u2588',
      barIncompleteChar: '\u2591',
      hideCursor: true,
      clearOnComplete: false,
      formatValue: (v, _options, type) => (type === 'value' || type === 'total' ? Number(v).toLocaleString('en-US') : String(v)),
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(state) {
      const point = read(state);
      const total = Math.max(point.total, point.value, 1);
      if (!started) {
        bar.start(total, point.value, { status: point.status });
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(point.value, { status: point.status });
      }
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}

/**
 * Waits with a progress bar until `wait` ends. Ctrl-C stops the bar first, then `interrupted`
 * says what keeps running (with the last state seen), and the command exits 130.
 */
export async function withProgress<T>(
  ctx: Context,
  bar: Progress<T>,
  wait: (signal: AbortSignal, onProgress: (state: T) => void) => Promise<T>,
  interrupted: (last: T | undefined) => void,
): Promise<T> {
  let last: T | undefined;
  const onProgress = (state: T) => {
    last = state;
    bar.update(state);
  };
  try {
    return await ctx.interruptible(
      (signal) => wait(signal, onProgress),
      () => {
        bar.stop();
        interrupted(last);
      },
    );
  } finally {
    bar.stop();
  }
}
