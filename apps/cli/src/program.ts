import { Command, CommanderError } from 'commander';
import { ApiError, ConnectionError } from '@sdx/sdk';
import { registerBatches } from './commands/batches';
import { registerCatalog } from './commands/catalog';
import { registerJobs } from './commands/jobs';
import { registerBilling } from './commands/billing';
import { registerKeys } from './commands/keys';
import { registerMcp } from './commands/mcp';
import { registerMonitors } from './commands/monitors';
import { registerSchedules } from './commands/schedules';
import { registerSession } from './commands/session';
import { registerWebhooks } from './commands/webhooks';
import { VERSION } from './context';
import { CliError, EXIT, type ExitCode } from './exit-codes';

export function buildProgram(): Command {
  const program = new Command('sdx')
    .description('The command line of the Social-Data Extraction API.\nSDX_API_KEY and SDX_BASE_URL override what `sdx login` stored.')
    .version(VERSION)
    .option('--json', 'machine output: JSON on stdout (errors as JSON on stderr)')
    .option('-q, --quiet', 'print only IDs')
    .showHelpAfterError('(sdx --help lists the commands)')
    .exitOverride();
  registerSession(program);
  registerCatalog(program);
  registerJobs(program);
  registerBatches(program);
  registerSchedules(program);
  registerMonitors(program);
  registerKeys(program);
  registerBilling(program);
  registerWebhooks(program);
  registerMcp(program);
  program.commands.forEach(function exitOverrideAll(command: Command) {
    command.exitOverride();
    command.commands.forEach(exitOverrideAll);
  });
  return program;
}

/** Runs the CLI and returns its exit code (docs/cli.md, "Exit codes"). */
export async function run(argv: string[]): Promise<ExitCode> {
  const program = buildProgram();
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    return report(error, json);
  }
}

function report(error: unknown, json: boolean): ExitCode {
  if (error instanceof CommanderError) {
    // commander printed the message (or the help, or the version) itself
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof CliError) {
    if (error.exitCode === EXIT.interrupted || error.exitCode === EXIT.jobFailed) return error.exitCode;
    fail(json, { error: error.exitCode === EXIT.usage ? 'usage' : 'failure', message: error.message });
    return error.exitCode;
  }
  if (error instanceof ApiError) {
    fail(json, { error: error.code, status: error.status, message: error.message, detail: error.detail, request_id: error.requestId });
    return EXIT.api;
  }
  if (error instanceof ConnectionError) {
    fail(json, { error: 'connection', message: error.message });
    return EXIT.connection;
  }
  fail(json, { error: 'failure', message: error instanceof Error ? error.message : String(error) });
  return EXIT.failure;
}

function fail(
  json: boolean,
  body: { error: string; message: string; status?: number; detail?: unknown; request_id?: string | null },
): void {
  if (json) {
    process.stderr.write(`${JSON.stringify(body)}\n`);
    return;
  }
  const requestId = body.request_id ? ` (request ${body.request_id})` : '';
  process.stderr.write(`sdx: ${body.message}${requestId}\n`);
}
