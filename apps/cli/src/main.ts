import { run } from './program';

// A reader that stops early (`sdx jobs list | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

// process.exitCode, not process.exit(): stdout is flushed before the process ends.
run(process.argv).then((code) => {
  process.exitCode = code;
});
