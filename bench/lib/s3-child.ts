/**
 * A loopback S3 (packages/testing's startLoopbackS3, s3rver) in a process of its own, forked so
 * that the store's work has its own event loop, as an object store has its own machines: a
 * benchmark's producers and API do not wait behind it. stop() ends the process and its objects.
 */
import { fork } from 'node:child_process';
import { startLoopbackS3 } from '@sdx/testing';

export interface S3Child {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

export function startS3Child(buckets: string[]): Promise<S3Child> {
  const child = fork(__filename, ['--s3-child', ...buckets], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the loopback S3 exited with ${code}`)));
    child.once('message', (message) => {
      const { endpoint, accessKeyId, secretAccessKey } = message as { endpoint: string; accessKeyId: string; secretAccessKey: string };
      child.removeAllListeners('exit');
      resolve({
        endpoint,
        accessKeyId,
        secretAccessKey,
        stop: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.send('stop');
          }),
      });
    });
  });
}

if (process.argv[2] === '--s3-child') {
  void (async () => {
    const s3 = await startLoopbackS3(process.argv.slice(3));
    process.on('message', (message) => {
      if (message === 'stop') void s3.stop().then(() => process.exit(0));
    });
    process.send!({ endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
  })();
}
