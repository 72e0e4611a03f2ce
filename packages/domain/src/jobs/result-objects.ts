import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { ObjectStore, StoreUnavailable } from '@sdx/storage';
import type { ResultBucket } from '@sdx/config';
import type { ObjectPart, ResultObjects, StoredObject } from '../resources';

const zip = promisify(gzip);
const unzip = promisify(gunzip);

/** Where result objects live in the bucket: `results/{job_id}/{page_no}-{nonce}.ndjson.gz`. */
export const RESULT_OBJECT_PREFIX = 'results/';

/**
 * A page's object key. Each write gets a new key (the nonce), so an attempt that lost its job
 * can never overwrite a page another attempt committed: its object is an orphan the sweeper
 * deletes (sweepOrphanedObjects).
 */
export function resultObjectKey(jobId: string, pageNo: number): string {
  return `${RESULT_OBJECT_PREFIX}${jobId}/${pageNo}-${randomBytes(6).toString('hex')}.ndjson.gz`;
}

/** The result bucket, or StoreUnavailable where none is configured (pages there cannot be read or written). */
export function bucketOf(services: { resultObjects?: ResultObjects }): ResultObjects {
  if (!services.resultObjects)
    throw new StoreUnavailable(
      'No object store is configured: set S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (and S3_ENDPOINT).',
    );
  return services.resultObjects;
}

/** A page's part of a shared object, or null when its object is the page. */
export function partOf(page: { object_offset: number | null; stored_bytes: number | null }): ObjectPart | null {
  return page.object_offset === null || page.stored_bytes === null ? null : { offset: page.object_offset, bytes: page.stored_bytes };
}

/** The key of an object shared by the last pages of jobs completed together. */
export function sharedObjectKey(): string {
  return `${RESULT_OBJECT_PREFIX}shared/${randomBytes(9).toString('hex')}.ndjson.gz`;
}

/** Whether a key is one of the result store's (a page's or a shared object's). */
export function isResultObjectKey(key: string): boolean {
  return /^results\/(shared\/[0-9a-f]+|[^/]+\/\d+-[0-9a-f]+)\.ndjson\.gz$/.test(key);
}

/**
 * The result store's bucket (RESULT_STORE=s3): each page one gzip-compressed NDJSON object.
 * Compression runs on libuv's thread pool, off the event loop.
 */
export class BucketResultObjects implements ResultObjects {
  constructor(readonly store: ObjectStore) {}

  static of(bucket: ResultBucket): BucketResultObjects {
    return new BucketResultObjects(
      ObjectStore.of({
        bucket: bucket.bucket,
        region: bucket.region,
        endpoint: bucket.endpoint,
        forcePathStyle: bucket.forcePathStyle,
        accessKeyId: bucket.accessKeyId,
        secretAccessKey: bucket.secretAccessKey,
      }),
    );
  }

  async put(jobId: string, pageNo: number, lines: readonly string[]): Promise<StoredObject> {
    const key = resultObjectKey(jobId, pageNo);
    const body = await zip(lines.length === 0 ? '' : `${lines.join('\n')}\n`, { level: 6 });
    await this.store.put(key, body, 'application/gzip');
    return { key, bytes: body.length };
  }

  async putPages(
    pages: ReadonlyArray<{ jobId: string; pageNo: number; lines: readonly string[] }>,
  ): Promise<{ key: string; parts: ObjectPart[] }> {
    const key = sharedObjectKey();
    const members = await Promise.all(pages.map((page) => zip(page.lines.length === 0 ? '' : `${page.lines.join('\n')}\n`, { level: 6 })));
    const parts: ObjectPart[] = [];
    let offset = 0;
    for (const member of members) {
      parts.push({ offset, bytes: member.length });
      offset += member.length;
    }
    await this.store.put(key, Buffer.concat(members), 'application/gzip');
    return { key, parts };
  }

  async lines(key: string, part?: ObjectPart | null): Promise<string[]> {
    const bytes = await this.store.getBytes(key, part ? { offset: part.offset, length: part.bytes } : undefined);
    const text = (await unzip(bytes)).toString('utf8');
    if (text.length === 0) return [];
    return text.slice(0, text.endsWith('\n') ? -1 : undefined).split('\n');
  }

  delete(keys: readonly string[]): Promise<void> {
    return this.store.delete(keys);
  }

  async *list(after?: string): AsyncGenerator<Array<{ key: string; lastModified: Date }>> {
    for await (const page of this.store.list(RESULT_OBJECT_PREFIX, after))
      yield page.map(({ key, lastModified }) => ({ key, lastModified }));
  }

  close(): void {
    this.store.close();
  }
}
