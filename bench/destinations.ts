/**
 * Destination delivery benchmark: a 25,000-item result (twitter followers, the sandbox)
 * delivered to a loopback S3 as xlsx, then as ndjson, by the worker's delivery pass
 * (deliverToDestinations), in this process. Reports each delivery's wall time, the object's
 * size and the peak growth of this process's RSS and V8 heap while it ran (sampled every
 * 20 ms, over the level after a collection before it), and checks the object against the
 * export download's bytes for ndjson.
 *
 * Target: under 150 MB of added RSS for each delivery (the exports' own bound for xlsx): the
 * export is streamed into a multipart upload (5 MiB parts, two in flight), never held whole.
 * Exits with code 1 when it is missed.
 *
 * Run: npm run bench:destinations   (DATABASE_URL's server and REDIS_URL; a fresh database)
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { startWorker } from '@sdx/app-worker';
import { loadConfig } from '@sdx/config';
import { createDestination, createJob, deliverToDestinations, type Tenant } from '@sdx/domain/testing';
import { createRuntime, untilRedisReady } from '@sdx/runtime';
import { ObjectStore } from '@sdx/storage';
import { startLoopbackS3, TEST_SECRETS_KEY } from '@sdx/testing';
import { benchPrefix, benchRedisUrl, createBenchDatabase } from './lib/db';
import { AMPLE, seedBenchWorkspace, waitFor } from './lib/seed';

const ITEMS = 25_000;
const MAX_ADDED_MB = 150;
const MB = 1024 * 1024;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

async function main(): Promise<void> {
  const database = await createBenchDatabase('dest');
  const s3 = await startLoopbackS3(['bench']);
  const config = loadConfig({
    DATABASE_URL: database.url,
    REDIS_URL: benchRedisUrl(),
    REDIS_PREFIX: benchPrefix('dest'),
    LOG_LEVEL: 'silent',
    SECRETS_KEY: TEST_SECRETS_KEY,
    WEBHOOK_ALLOW_HTTP: '1',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
  });
  const runtime = createRuntime(config, { name: 'bench' });
  await untilRedisReady(runtime);
  const failures: string[] = [];
  try {
    const ws = await seedBenchWorkspace(runtime, { name: 'dest', ...AMPLE });
    const workspace = await runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow();
    const tenant: Tenant = { workspace, keyId: null, role: null };
    const actor = { type: 'system' as const, id: 'bench', ip: null };
    const store = ObjectStore.of({
      bucket: 'bench',
      region: s3.region,
      endpoint: s3.endpoint,
      forcePathStyle: true,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
    });

    // The extraction runs in a worker without deliveries: the deliveries are run below, measured.
    const worker = startWorker({
      services: runtime.services,
      providers: runtime.registry,
      redisUrl: config.redisUrl,
      concurrency: 2,
      reconcile: false,
      destinations: false,
    });
    const rows: string[][] = [];
    try {
      for (const format of ['xlsx', 'ndjson'] as const) {
        const destination = await createDestination(
          runtime.services,
          tenant,
          {
            name: format,
            type: 's3',
            bucket: 'bench',
            prefix: `${format}/`,
            endpoint: s3.endpoint,
            force_path_style: true,
            access_key_id: s3.accessKeyId,
            secret_access_key: s3.secretAccessKey,
            format,
          },
          actor,
        );
        const started = Date.now();
        const { job } = await createJob(
          runtime.services,
          tenant,
          { platform: 'twitter', operation: 'followers', target: `bench${format}`, limit: ITEMS, destination_id: destination.id },
          { endpoint: 'bench' },
        );
        let status = '';
        let results = 0;
        const poll = setInterval(() => {
          void runtime.db
            .selectFrom('jobs')
            .select(['status', 'result_count'])
            .where('id', '=', job.id)
            .executeTakeFirstOrThrow()
            .then((row) => {
              status = row.status;
              results = row.result_count ?? 0;
            });
        }, 100);
        await waitFor(() => status === 'completed' || status === 'failed', 600_000, `job ${job.id}`);
        clearInterval(poll);
        if (status !== 'completed' || results !== ITEMS) throw new Error(`the job ended ${status} with ${results} results`);
        const extraction = Date.now() - started;

        gc();
        const baseRss = process.memoryUsage().rss;
        const baseHeap = process.memoryUsage().heapUsed;
        let peakRss = baseRss;
        let peakHeap = baseHeap;
        const sampler = setInterval(() => {
          const now = process.memoryUsage();
          peakRss = Math.max(peakRss, now.rss);
          peakHeap = Math.max(peakHeap, now.heapUsed);
        }, 20);
        const t0 = Date.now();
        while ((await deliverToDestinations(runtime.services)) === 0);
        const took = Date.now() - t0;
        clearInterval(sampler);
        const delivered = await runtime.db
          .selectFrom('jobs')
          .select(['delivery_status', 'delivery_error', 'delivery_key'])
          .where('id', '=', job.id)
          .executeTakeFirstOrThrow();
        if (delivered.delivery_status !== 'succeeded')
          throw new Error(`the delivery is ${delivered.delivery_status}: ${delivered.delivery_error}`);
        const bytes = (await store.getBytes(delivered.delivery_key!)).length;
        const addedRss = (peakRss - baseRss) / MB;
        const addedHeap = (peakHeap - baseHeap) / MB;
        rows.push([
          format,
          String(ITEMS),
          `${(bytes / MB).toFixed(1)} MB`,
          bytes > 5 * MB ? 'multipart' : 'one part',
          `${extraction} ms`,
          `${took} ms`,
          `${addedRss.toFixed(1)} MB`,
          `${addedHeap.toFixed(1)} MB`,
        ]);
        if (addedRss > MAX_ADDED_MB) failures.push(`${format}: ${addedRss.toFixed(1)} MB of added RSS (target < ${MAX_ADDED_MB} MB)`);
      }
    } finally {
      await worker.close();
      store.close();
    }
    const header = ['format', 'items', 'object', 'upload', 'extraction', 'delivery', 'peak RSS growth', 'peak heap growth'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
    console.log(line(header));
    for (const row of rows) console.log(line(row));
    console.log(failures.length === 0 ? `PASS: every delivery under ${MAX_ADDED_MB} MB of added RSS` : `FAIL: ${failures.join('; ')}`);
  } finally {
    await runtime.close();
    await s3.stop();
    await database.drop();
  }
  if (failures.length > 0) process.exit(1);
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
