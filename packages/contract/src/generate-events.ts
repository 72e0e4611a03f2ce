import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadOpenApiDocument, type OpenApiDocument } from './document';

/**
 * Writes src/events.ts, the values of openapi.yaml's string enums that code needs at run time
 * (the types alone are in openapi.d.ts): `npm run generate:types` runs it as
 * `tsx packages/contract/src/generate-events.ts -o packages/contract/src/events.ts`, and
 * test/generated-files.test.ts fails when the file differs from what openapi.yaml gives.
 * The module it writes imports nothing but types, so the console's browser bundle can take it.
 */

/** The enums emitted, by schema name: the constant's name and what it is. */
const ENUMS: Record<string, { constant: string; doc: string }> = {
  WebhookEventType: {
    constant: 'WEBHOOK_EVENT_TYPES',
    doc: "the events a webhook can take (`*` in a webhook's `events` stands for all of them).",
  },
};

export function renderEventsModule(document: OpenApiDocument): string {
  const schemas = document.components?.schemas ?? {};
  const blocks = Object.entries(ENUMS).map(([schema, { constant, doc }]) => {
    const values = (schemas[schema] as { enum?: unknown[] } | undefined)?.enum;
    if (!values || values.length === 0 || !values.every((v): v is string => typeof v === 'string')) {
      throw new Error(`openapi.yaml: components.schemas.${schema} is not an enum of strings`);
    }
    return [
      `/** components.schemas.${schema}: ${doc} */`,
      `export const ${constant} = [`,
      ...values.map((v) => `  '${v.replace(/[\\']/g, '\\$&')}',`),
      `] as const satisfies ReadonlyArray<components['schemas']['${schema}']>;`,
      '',
      `export type ${schema} = (typeof ${constant})[number];`,
    ].join('\n');
  });
  return [
    '// Generated from openapi.yaml by `npm run generate:types` (src/generate-events.ts). Do not edit.',
    "import type { components } from './openapi';",
    '',
    blocks.join('\n\n'),
    '',
  ].join('\n');
}

if (require.main === module) {
  const at = process.argv.indexOf('-o');
  const out = at > 0 ? process.argv[at + 1] : undefined;
  if (!out) {
    console.error('usage: tsx packages/contract/src/generate-events.ts -o <file>');
    process.exit(2);
  }
  writeFileSync(path.resolve(out), renderEventsModule(loadOpenApiDocument()));
}
