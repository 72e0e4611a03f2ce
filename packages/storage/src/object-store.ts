import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';

/**
 * One S3-compatible bucket, as the result store (RESULT_STORE=s3) and a workspace's destination
 * use it: put, streamed get, batched delete and listing, over @aws-sdk/client-s3, and streamed
 * multipart upload over @aws-sdk/lib-storage. A fault of the store (it does not answer, it
 * answers 5xx, a timeout) is a StoreUnavailable; a refusal (403, a missing bucket) keeps the
 * store's own error and message.
 */

/** Where a bucket is and how to sign in to it. */
export interface BucketSettings {
  bucket: string;
  region: string;
  /** A custom endpoint (MinIO, a loopback S3, another provider); AWS when absent. */
  endpoint?: string | null;
  forcePathStyle?: boolean;
  accessKeyId: string;
  secretAccessKey: string;
  /** Per-request timeout in ms (connect and socket); 10 s by default. */
  timeoutMs?: number;
  /**
   * How the connections resolve host names (a destination's: the SSRF guard's lookup, so a
   * connection only goes to addresses it checked); the system's otherwise.
   */
  lookup?: LookupFunction;
}

/** The store did not answer, or answered with a fault of its own: retry later. */
export class StoreUnavailable extends Error {
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'StoreUnavailable';
  }
}

export function createS3Client(settings: BucketSettings): S3Client {
  const timeout = settings.timeoutMs ?? 10_000;
  return new S3Client({
    region: settings.region,
    endpoint: settings.endpoint ?? undefined,
    forcePathStyle: settings.forcePathStyle ?? false,
    credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
    // Checksums only where an operation requires one: S3-compatible stores other than AWS (a
    // loopback S3, older MinIO) do not all accept the trailing checksums of a streamed body.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 2,
    requestHandler: {
      connectionTimeout: timeout,
      requestTimeout: timeout,
      ...(settings.lookup
        ? {
            httpAgent: new http.Agent({ keepAlive: true, lookup: settings.lookup }),
            httpsAgent: new https.Agent({ keepAlive: true, lookup: settings.lookup }),
          }
        : {}),
    },
  });
}

/** True when an error of the S3 client means the store is down or failing, not refusing. */
function isFault(err: unknown): boolean {
  if (err instanceof S3ServiceException) return err.$fault === 'server' || (err.$metadata.httpStatusCode ?? 500) >= 500;
  return true;
}

function wrap(err: unknown, what: string): never {
  if (err instanceof StoreUnavailable) throw err;
  if (isFault(err)) throw new StoreUnavailable(`The object store failed to ${what}: ${(err as Error).message}`, err);
  throw err;
}

export interface StoredObject {
  key: string;
  lastModified: Date;
  size: number;
}

export class ObjectStore {
  readonly bucket: string;

  constructor(
    readonly client: S3Client,
    bucket: string,
  ) {
    this.bucket = bucket;
  }

  static of(settings: BucketSettings): ObjectStore {
    return new ObjectStore(createS3Client(settings), settings.bucket);
  }

  async put(key: string, body: Buffer | string, contentType: string, contentEncoding?: string): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType, ContentEncoding: contentEncoding }),
      );
    } catch (err) {
      wrap(err, `write ${key}`);
    }
  }

  /**
   * Writes a stream of unknown length: a multipart upload in parts of `partSize` bytes (5 MiB,
   * the least S3 takes), at most `queueSize` parts in memory, so a large export never sits whole.
   * Returns the bytes written.
   */
  async upload(key: string, body: Readable, contentType: string, options: { partSize?: number; queueSize?: number } = {}): Promise<number> {
    let bytes = 0;
    body.on('data', (chunk: Buffer | string) => {
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    });
    try {
      const upload = new Upload({
        client: this.client,
        params: { Bucket: this.bucket, Key: key, Body: body, ContentType: contentType },
        partSize: options.partSize ?? 5 * 1024 * 1024,
        queueSize: options.queueSize ?? 2,
        leavePartsOnError: false,
      });
      await upload.done();
      return bytes;
    } catch (err) {
      body.destroy();
      wrap(err, `write ${key}`);
    }
  }

  /** The object's bytes as a stream. */
  async get(key: string): Promise<Readable> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const body = out.Body;
      if (!body) throw new StoreUnavailable(`The object store answered no body for ${key}`);
      return body instanceof Readable ? body : Readable.fromWeb(body.transformToWebStream() as Parameters<typeof Readable.fromWeb>[0]);
    } catch (err) {
      wrap(err, `read ${key}`);
    }
  }

  /** The object's bytes, whole (a page of a result: small), or `length` of them from `offset`. */
  async getBytes(key: string, range?: { offset: number; length: number }): Promise<Buffer> {
    try {
      const Range = range ? `bytes=${range.offset}-${range.offset + range.length - 1}` : undefined;
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range }));
      if (!out.Body) throw new StoreUnavailable(`The object store answered no body for ${key}`);
      return Buffer.from(await out.Body.transformToByteArray());
    } catch (err) {
      wrap(err, `read ${key}`);
    }
  }

  /** Deletes the keys, 1,000 to a request (S3's bound). Deleting a missing key is not an error. */
  async delete(keys: readonly string[]): Promise<void> {
    for (let at = 0; at < keys.length; at += 1000) {
      const chunk = keys.slice(at, at + 1000);
      try {
        const out = await this.client.send(
          new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: chunk.map((Key) => ({ Key })), Quiet: true } }),
        );
        const failed = (out.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
        if (failed.length > 0)
          throw new StoreUnavailable(`The object store did not delete ${failed.length} objects: ${failed[0].Message ?? failed[0].Code}`);
      } catch (err) {
        wrap(err, 'delete objects');
      }
    }
  }

  /** The objects under `prefix`, a listing page at a time, from `after` (a key) when given. */
  async *list(prefix: string, after?: string): AsyncGenerator<StoredObject[]> {
    let token: string | undefined;
    do {
      let out;
      try {
        out = await this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: prefix,
            ContinuationToken: token,
            StartAfter: token ? undefined : after,
          }),
        );
      } catch (err) {
        wrap(err, `list ${prefix}`);
      }
      const page = (out.Contents ?? []).map((o) => ({ key: o.Key!, lastModified: o.LastModified ?? new Date(0), size: o.Size ?? 0 }));
      if (page.length > 0) yield page;
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
  }

  close(): void {
    this.client.destroy();
  }
}
