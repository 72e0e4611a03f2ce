import pc from 'picocolors';

/**
 * What the CLI prints. Machine output (`--json`) is JSON on stdout and nothing else there.
 * Human output is aligned tables and lines, coloured only when the stream is a terminal (and
 * NO_COLOR is not set); progress and notices go to stderr so stdout stays the result.
 */

export interface Streams {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
}

export type Colors = ReturnType<typeof pc.createColors>;

export class Output {
  readonly colors: Colors;
  readonly errColors: Colors;

  constructor(
    readonly json: boolean,
    readonly quiet: boolean,
    private readonly streams: Streams,
  ) {
    this.colors = pc.createColors(colorful(streams.stdout, streams.env));
    this.errColors = pc.createColors(colorful(streams.stderr, streams.env));
  }

  get stderrIsTerminal(): boolean {
    return Boolean(this.streams.stderr.isTTY);
  }

  get stdoutIsTerminal(): boolean {
    return Boolean(this.streams.stdout.isTTY);
  }

  get stdout(): NodeJS.WriteStream {
    return this.streams.stdout;
  }

  get stderr(): NodeJS.WriteStream {
    return this.streams.stderr;
  }

  /** The machine form of a result. */
  data(value: unknown): void {
    this.streams.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  line(text = ''): void {
    this.streams.stdout.write(`${text}\n`);
  }

  /** A notice for the person at the terminal (stderr). */
  note(text: string): void {
    this.streams.stderr.write(`${text}\n`);
  }

  /** Prints a result: JSON with --json, the IDs with --quiet, else what `human` prints. */
  result(value: unknown, human: () => void, ids?: string[]): void {
    if (this.json) this.data(value);
    else if (this.quiet && ids) for (const id of ids) this.line(id);
    else human();
  }

  /** Rows as an aligned table with a header. */
  table<T>(rows: T[], columns: Array<Column<T>>): void {
    if (rows.length === 0) {
      this.note(this.errColors.dim('(none)'));
      return;
    }
    const cells = rows.map((row) => columns.map((column) => column.value(row)));
    const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((row) => visibleLength(row[i]))));
    const pad = (text: string, i: number) => {
      const gap = ' '.repeat(widths[i] - visibleLength(text));
      return columns[i].align === 'right' ? gap + text : text + gap;
    };
    this.line(
      columns
        .map((column, i) => this.colors.bold(pad(column.header, i)))
        .join('  ')
        .trimEnd(),
    );
    for (const row of cells)
      this.line(
        row
          .map((cell, i) => pad(columns[i].color?.(cell, this.colors) ?? cell, i))
          .join('  ')
          .trimEnd(),
      );
  }

  /** One record as aligned `key  value` lines. */
  record(entries: Array<[string, unknown]>): void {
    const width = Math.max(...entries.map(([key]) => key.length));
    for (const [key, value] of entries) this.line(`${this.colors.dim(key.padEnd(width))}  ${formatValue(value)}`);
  }

  status(value: string): string {
    return colorStatus(value, this.colors);
  }
}

export interface Column<T> {
  header: string;
  value: (row: T) => string;
  align?: 'left' | 'right';
  color?: (text: string, colors: Colors) => string;
}

export function colorStatus(value: string, colors: Colors): string {
  if (value === 'completed' || value === 'active' || value === 'succeeded') return colors.green(value);
  if (value === 'failed' || value.startsWith('skipped')) return colors.red(value);
  if (value === 'cancelled' || value === 'paused') return colors.yellow(value);
  if (value === 'running' || value === 'queued' || value === 'pending') return colors.cyan(value);
  return value;
}

export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'number') return value.toLocaleString('en-US');
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

export function number(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : value.toLocaleString('en-US');
}

const ANSI = /\u001b\[[0-9;]*m/g;

function visibleLength(text: string): number {
  return text.replace(ANSI, '').length;
}

function colorful(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}
