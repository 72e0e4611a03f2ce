import { run } from './program';

// A reader that stops early (`sdx jobs list | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

// process.exitCode, not process.exit(): stdout is flushed before the process ends. run() reports
// every error itself and resolves to the exit code: it does not reject.
void run(process.argv).then((code) => {
  process.exitCode = code;
});
