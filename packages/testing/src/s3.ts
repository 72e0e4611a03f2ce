import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A loopback S3 for tests and benches: s3rver on a free port, its objects in a temp folder,
 * removed by stop(). Credentials are S3rver's fixed pair; buckets are created on start.
 * Clients reach it through a TCP relay of its own, so a test can take the store down and bring
 * it back (pause, resume) without giving up the port: while paused, every connection is cut and
 * every new one reset at once, as a store that fails.
 */
export interface LoopbackS3 {
  endpoint: string;
  port: number;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The folder holding the buckets' objects. */
  directory: string;
  /** Stops answering: open connections are cut, new ones reset. The objects are kept. */
  pause(): Promise<void>;
  /** Answers again, with the same objects. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

export async function startLoopbackS3(buckets: string[] = ['sdx-results']): Promise<LoopbackS3> {
  // Loaded by the tests that start one, not by every file that imports @sdx/testing (about 400 ms).
  const { default: S3rverServer } = await import('s3rver');
  const directory = mkdtempSync(path.join(os.tmpdir(), 'sdx-s3-'));
  const server = new S3rverServer({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name, configs: [] })),
  });
  const inner = (await server.run()) as { port: number };
  let down = false;
  const open = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    if (down) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(inner.port, '127.0.0.1');
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const port = (relay.address() as net.AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    directory,
    pause() {
      down = true;
      for (const socket of open) socket.resetAndDestroy();
      open.clear();
      return Promise.resolve();
    },
    resume() {
      down = false;
      return Promise.resolve();
    },
    async stop() {
      down = true;
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
