import { readFileSync } from 'node:fs';
import { Client } from '@sdx/sdk';
import { settings } from './config';
import { EXIT, CliError, UsageError } from './exit-codes';
import { Output, type Streams } from './output';

export const VERSION = '1.0.0';

/** What a command gets: the output, the environment, and clients made from the settings. */
export class Context {
  readonly out: Output;

  constructor(
    readonly streams: Streams & { stdin: NodeJS.ReadStream },
    options: { json?: boolean; quiet?: boolean },
  ) {
    this.out = new Output(Boolean(options.json), Boolean(options.quiet), streams);
  }

  get env(): NodeJS.ProcessEnv {
    return this.streams.env;
  }

  /** A client with the API key of SDX_API_KEY or `sdx login`. */
  client(): Client {
    const current = settings(this.env);
    if (!current.apiKey) throw new UsageError('no API key: run `sdx login`, or set SDX_API_KEY');
    return this.clientWith(current.apiKey, current.baseUrl);
  }

  /** A client without a key (for the catalog). */
  anonymousClient(): Client {
    const current = settings(this.env);
    return this.clientWith(current.apiKey, current.baseUrl);
  }

  clientWith(apiKey: string | undefined, baseUrl: string): Client {
    return new Client({ apiKey, baseUrl, headers: { 'User-Agent': `sdx-cli/${VERSION} node/${process.version}` } });
  }

  /**
   * Runs `work` until it ends or Ctrl-C. Ctrl-C stops the waiting only: `onInterrupt` says what
   * keeps running, and the command exits 130. A second Ctrl-C exits at once.
   */
  async interruptible<T>(work: (signal: AbortSignal) => Promise<T>, onInterrupt: () => void): Promise<T> {
    const controller = new AbortController();
    const onSigint = () => {
      if (controller.signal.aborted) process.exit(EXIT.interrupted);
      controller.abort(new Error('interrupted'));
    };
    process.on('SIGINT', onSigint);
    try {
      return await work(controller.signal);
    } catch (error) {
      if (!controller.signal.aborted) throw error;
      onInterrupt();
      throw new CliError('interrupted', EXIT.interrupted);
    } finally {
      process.off('SIGINT', onSigint);
    }
  }
}

/** Targets of a file: one per line (blank lines and `#` comments skipped), or a JSON array; `-` reads stdin. */
export function readTargets(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  if (text.trimStart().startsWith('[')) {
    const parsed = JSON.parse(text) as unknown;
    if (!Array.isArray(parsed) || !parsed.every((t) => typeof t === 'string'))
      throw new UsageError(`${file}: a JSON targets file is an array of strings`);
    return parsed;
  }
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
