import { sql } from 'kysely';
import type { AppConfig } from '@sdx/config';
import type { Executor } from '@sdx/db';
import { SEALED_COLUMNS, SEALED_PREFIX, sealerOf } from '../sealing';

/** What a re-sealing pass did to one sealed column. */
export interface ResealReport {
  table: string;
  column: string;
  /** Values re-sealed under the current key. */
  resealed: number;
  /** Values no key of this process opens (sealed under a key that is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS): left as they are. */
  unopenable: number;
}

const BATCH = 200;

/**
 * `npm run admin -- rotate-secrets`, the third step of a rotation of SECRETS_KEY
 * (docs/deployment.md): every sealed value that is not under the current key (SECRETS_KEY) is
 * opened (with SECRETS_KEY_PREVIOUS, or the development key) and sealed again under it, column
 * by column (SEALED_COLUMNS: webhook secrets, TOTP secrets, unsent mail, destination credentials), in batches. Each row
 * is written only if its value is still the one read, so a concurrent change (a rotation of a
 * webhook's secret, a mail sent) wins and nothing is lost; running it again finds nothing to do.
 */
export async function resealSecrets(db: Executor, config: Pick<AppConfig, 'secretsKey' | 'secretsKeyPrevious'>): Promise<ResealReport[]> {
  const sealer = sealerOf(config);
  const current = `${SEALED_PREFIX}${sealer.keyId}:%`;
  const reports: ResealReport[] = [];
  for (const [table, column] of SEALED_COLUMNS) {
    const report: ResealReport = { table, column, resealed: 0, unopenable: 0 };
    let after = '';
    for (;;) {
      const { rows } = await sql<{ id: string; value: string }>`
        select id, ${sql.ref(column)} as value from ${sql.table(table)}
        where id > ${after} and ${sql.ref(column)} like ${`${SEALED_PREFIX}%`} and ${sql.ref(column)} not like ${current}
        order by id limit ${BATCH}`.execute(db);
      if (rows.length === 0) break;
      after = rows[rows.length - 1].id;
      const changes: Array<{ id: string; before: string; after: string }> = [];
      for (const row of rows) {
        try {
          changes.push({ id: row.id, before: row.value, after: sealer.seal(sealer.open(row.value)) });
        } catch {
          report.unopenable += 1;
        }
      }
      if (changes.length === 0) continue;
      const written = await sql`
        update ${sql.table(table)} t set ${sql.ref(column)} = v.after
        from unnest(${changes.map((c) => c.id)}::text[], ${changes.map((c) => c.before)}::text[], ${changes.map((c) => c.after)}::text[]) as v (id, before, after)
        where t.id = v.id and t.${sql.ref(column)} = v.before`.execute(db);
      report.resealed += Number(written.numAffectedRows ?? 0);
    }
    reports.push(report);
  }
  return reports;
}
