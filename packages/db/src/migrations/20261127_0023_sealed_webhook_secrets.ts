import { type Kysely, type RawBuilder, sql } from 'kysely';
import { secretsKey } from '@sdx/config';
import { SEALED_PREFIX, type Sealer, sealerOf } from '@sdx/sealing';

/**
 * Webhook secrets sealed at rest (extensions-2.md 2): every `webhooks.secret` and
 * `previous_secret` still in clear (`whsec_…`) is sealed with AES-256-GCM under SECRETS_KEY, in
 * batches, then a check constraint makes sure no clear value is ever written again (the
 * constraint requires the sealed form, which is stricter than refusing `whsec_`).
 *
 * A migration gets only the database, so this one reads the keys from the environment, as every
 * process of the service does (packages/config `secretsKey`, the same parsing and the same
 * production rule as loadConfig): the migration runners (`npm start`, `npm run migrate`, the
 * migrate Job of infra/k8s) run with the service's environment. Outside production, without
 * SECRETS_KEY, the development key seals, as it does for the service itself.
 *
 * Down opens them again (so the code before this migration can sign), which needs the key that
 * sealed them.
 */
const BATCH = 500;

function sealerFromEnvironment(env: NodeJS.ProcessEnv = process.env): Sealer {
  const production = (env.NODE_ENV ?? 'development') === 'production';
  return sealerOf({
    secretsKey: secretsKey(env, 'SECRETS_KEY', production),
    secretsKeyPrevious: secretsKey(env, 'SECRETS_KEY_PREVIOUS', false),
  });
}

interface SecretRow {
  id: string;
  secret: string;
  previous_secret: string | null;
}

/** Rewrites, batch by batch, the rows `pick` selects, with `change` applied to both secret columns; stops when none is left. */
async function rewrite(db: Kysely<unknown>, pick: RawBuilder<unknown>, change: (value: string) => string): Promise<void> {
  let after = '';
  for (;;) {
    const { rows } = await sql<SecretRow>`
      select id, secret, previous_secret from webhooks where id > ${after} and (${pick}) order by id limit ${BATCH}`.execute(db);
    if (rows.length === 0) return;
    const ids = rows.map((r) => r.id);
    const secrets = rows.map((r) => change(r.secret));
    const previous = rows.map((r) => (r.previous_secret === null ? null : change(r.previous_secret)));
    await sql`
      update webhooks w set secret = v.secret, previous_secret = v.previous_secret
      from unnest(${ids}::text[], ${secrets}::text[], ${previous}::text[]) as v (id, secret, previous_secret)
      where w.id = v.id`.execute(db);
    after = ids[ids.length - 1]!;
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const sealer = sealerFromEnvironment();
  const sealed = `${SEALED_PREFIX}%`;
  await rewrite(db, sql`secret not like ${sealed} or previous_secret not like ${sealed}`, (value) =>
    sealer.isSealed(value) ? value : sealer.seal(value),
  );
  await sql`alter table webhooks add constraint webhooks_secret_sealed check (secret like ${sql.lit(`${SEALED_PREFIX}%`)})`.execute(db);
  await sql`alter table webhooks add constraint webhooks_previous_secret_sealed check (previous_secret is null or previous_secret like ${sql.lit(`${SEALED_PREFIX}%`)})`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhooks drop constraint if exists webhooks_previous_secret_sealed`.execute(db);
  await sql`alter table webhooks drop constraint if exists webhooks_secret_sealed`.execute(db);
  const sealer = sealerFromEnvironment();
  const sealed = `${SEALED_PREFIX}%`;
  await rewrite(db, sql`secret like ${sealed} or previous_secret like ${sealed}`, (value) =>
    sealer.isSealed(value) ? sealer.open(value) : value,
  );
}
