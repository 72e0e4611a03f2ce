import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { resultStoreOf } from '@sdx/config';

/**
 * The `s3` profile of docker-compose.yml (checked here, as no compose binary may be at hand):
 * MinIO and a one-shot service creating the results bucket, in that profile only; every app
 * service given RESULT_STORE and the S3_* variables (not waiting for the bucket: docker-compose
 * 1.x refuses a dependency on a service of a profile that is off); and the command the file's header gives, with compose's defaults, configuring the service
 * on that MinIO and that bucket, while a plain `docker compose up` names no object store.
 */
interface Service {
  image?: string;
  profiles?: string[];
  command?: string[] | string;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string; required?: boolean }>;
  ports?: string[];
}

const text = readFileSync(path.resolve(__dirname, '../../../docker-compose.yml'), 'utf8');
const compose = parse(text, { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };

/** Compose's `${NAME:-default}` and `${NAME}` against the shell's variables `shell`. */
function interpolate(value: string, shell: Record<string, string>): string {
  return value.replace(
    /\$\{([A-Z0-9_]+)(?::-([^}]*))?\}/g,
    (_, name: string, fallback: string | undefined) => shell[name] || (fallback ?? ''),
  );
}

function resolved(service: Service, shell: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), shell)]));
}

/** The variables the header's `… docker compose --profile s3 up` line sets. */
function headerShell(): Record<string, string> {
  const line = /^#\s+((?:[A-Z0-9_]+=\S+\s+)+)docker compose --profile s3 up/m.exec(text)?.[1] ?? '';
  return Object.fromEntries(
    line
      .trim()
      .split(/\s+/)
      .map((pair) => pair.split('=') as [string, string]),
  );
}

it('has MinIO and a one-shot bucket creator, in the s3 profile only', () => {
  const minio = compose.services.minio;
  expect(minio.image).toMatch(/^minio\/minio(:|$)/);
  expect(minio.profiles).toEqual(['s3']);
  expect(minio.command).toEqual(expect.arrayContaining(['server', '/data']));
  expect('miniodata' in compose.volumes).toBe(true);
  // Published on loopback only: the root user's keys are development values.
  for (const port of minio.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:/);

  const init = compose.services['minio-init'];
  expect(init.image).toMatch(/^minio\/mc(:|$)/);
  expect(init.profiles).toEqual(['s3']);
  expect(init.depends_on).toEqual({ minio: { condition: 'service_healthy' } });
  const script = (init.command as string[]).join('\n');
  expect(script).toContain('mc alias set local http://minio:9000');
  expect(script).toContain('mc mb --ignore-existing');
  // Services outside the profile keep running without it.
  for (const name of ['postgres', 'redis', 'api', 'worker', 'scheduler', 'migrate'])
    expect(compose.services[name].profiles).toBeUndefined();
});

it('gives every app service the result store variables, and names no service of the profile', () => {
  for (const app of ['api', 'worker', 'scheduler', 'migrate']) {
    const env = compose.services[app].environment!;
    for (const name of [
      'RESULT_STORE',
      'S3_BUCKET',
      'S3_ENDPOINT',
      'S3_REGION',
      'S3_ACCESS_KEY_ID',
      'S3_SECRET_ACCESS_KEY',
      'S3_FORCE_PATH_STYLE',
    ]) {
      expect(env[name]).toMatch(new RegExp(`^\\$\\{${name}(:-[^}]*)?\\}$`));
    }
  }
  // Not waited for: a dependency on a service of a profile that is off is an error to
  // docker-compose 1.x; until the bucket exists, page writes are attempts retried.
  for (const app of ['api', 'worker', 'scheduler']) expect(compose.services[app].depends_on ?? {}).not.toHaveProperty('minio-init');
});

it("runs the service on the profile's MinIO with the header's command, and on Postgres without it", () => {
  const shell = headerShell();
  expect(shell.RESULT_STORE).toBe('s3');
  const env = resolved(compose.services.worker, shell);
  const store = resultStoreOf(env);
  expect(store.resultStore).toBe('s3');
  expect(store.s3).toEqual({
    endpoint: 'http://minio:9000',
    bucket: interpolate(compose.services['minio-init'].environment!.BUCKET, shell),
    region: 'us-east-1',
    accessKeyId: interpolate(compose.services.minio.environment!.MINIO_ROOT_USER, shell),
    secretAccessKey: interpolate(compose.services.minio.environment!.MINIO_ROOT_PASSWORD, shell),
    forcePathStyle: true,
  });
  expect(store.s3!.bucket).toBe('sdx-results');

  // `docker compose up` alone: results in Postgres, and no bucket named, so nothing (the
  // retention's orphan sweep among them) talks to an object store that is not running.
  expect(resultStoreOf(resolved(compose.services.worker, {}))).toEqual({ resultStore: 'postgres', s3: null });
});
