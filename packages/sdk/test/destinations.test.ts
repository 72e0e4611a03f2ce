import { ApiError, type Client } from '@sdx/sdk';
import { type LoopbackS3, type ServedStack, startLoopbackS3, startServedStack } from '@sdx/testing';
import { clientFor } from './support';

/** Destinations through the SDK, against a served stack and a loopback S3: create, list, get, a job that names one, delete, and the errors as ApiError. */
let served: ServedStack;
let s3: LoopbackS3;
let sdx: Client;
beforeAll(async () => {
  s3 = await startLoopbackS3(['sdk-bucket']);
  served = await startServedStack({ env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' } });
  sdx = clientFor(served.url, await served.stack.workspace({ credits: 100 }));
});
afterAll(async () => {
  await served.close();
  await s3.stop();
});

it('creates, lists, gets and deletes a destination, and submits a job to it', async () => {
  const body = {
    name: 'SDK',
    type: 's3' as const,
    bucket: 'sdk-bucket',
    endpoint: s3.endpoint,
    force_path_style: true,
    access_key_id: s3.accessKeyId,
    secret_access_key: s3.secretAccessKey,
    format: 'json' as const,
  };
  const created = await sdx.destinations.create(body);
  expect(created).toMatchObject({ id: expect.stringMatching(/^dst_/), bucket: 'sdk-bucket', format: 'json', prefix: '' });
  expect((await sdx.destinations.list()).data.map((d) => d.id)).toEqual([created.id]);
  expect(await sdx.destinations.get(created.id)).toEqual(created);
  const job = await sdx.jobs.create({ operation: 'profile', target: 'natgeo', destination_id: created.id });
  expect(job.delivery).toMatchObject({ destination_id: created.id, status: 'pending', key: `${job.id}.json` });

  const refused = await sdx.destinations.create({ ...body, bucket: 'missing-bucket' }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(ApiError);
  expect((refused as ApiError).code).toBe('destination_unreachable');

  await sdx.destinations.delete(created.id);
  const gone = await sdx.destinations.get(created.id).catch((e: unknown) => e);
  expect((gone as ApiError).status).toBe(404);
  expect((gone as ApiError).code).toBe('destination_not_found');
});
