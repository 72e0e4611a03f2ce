/**
 * `sdx` exit codes (docs/cli.md lists them): scripts can tell what went wrong without parsing
 * text.
 */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** Something unexpected: a file that cannot be written, a bug. */
  failure: 1,
  /** Bad usage: an unknown command or option, a missing or invalid argument, no API key. */
  usage: 2,
  /** The service answered with an error (4xx or 5xx, after the SDK's retries). */
  api: 3,
  /** The service could not be reached, or did not answer in time. */
  connection: 4,
  /** A job or batch waited for ended failed or cancelled. */
  jobFailed: 5,
  /** Interrupted (Ctrl-C): the job or batch being waited for keeps running. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the CLI reports itself, with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}
