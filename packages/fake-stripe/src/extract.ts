/**
 * The part of Stripe's OpenAPI description the fake serves: the operations below (complete, with
 * their form request bodies and query parameters), plus the `event` schema of webhook payloads,
 * and every component schema those reference, transitively. Component schemas lose their
 * `description` texts (the closure is ~730 KB with them, ~370 KB without); their structure is
 * kept whole. Request bodies keep everything.
 */
export const OPERATIONS = [
  ['post', '/v1/customers'],
  ['get', '/v1/customers/{customer}'],
  ['post', '/v1/checkout/sessions'],
  ['get', '/v1/checkout/sessions/{session}'],
  ['post', '/v1/payment_intents'],
  ['get', '/v1/payment_intents/{intent}'],
  ['get', '/v1/payment_methods/{payment_method}'],
  ['post', '/v1/refunds'],
  ['get', '/v1/charges/{charge}'],
  // Monthly plans (extensions-3.md 2): subscriptions, their prices and invoices, the billing portal.
  ['post', '/v1/prices'],
  ['get', '/v1/subscriptions/{subscription_exposed_id}'],
  ['post', '/v1/subscriptions/{subscription_exposed_id}'],
  ['get', '/v1/invoices/{invoice}'],
  ['post', '/v1/billing_portal/sessions'],
] as const;

/** Schemas kept although no operation above references them: the webhook payload. */
export const EXTRA_SCHEMAS = ['event'] as const;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface SourceNote {
  document: string;
  upstream: string | null;
  license: string;
  generatedBy: string;
  trimmed: string;
}

export interface StripeSubset {
  openapi: string;
  info: { title: string; version: string };
  source: SourceNote;
  paths: Record<string, Record<string, JsonObject>>;
  components: { schemas: Record<string, JsonObject> };
}

interface SourceDocument {
  openapi: string;
  info: { title: string; version: string; [key: string]: unknown };
  paths: Record<string, Record<string, JsonObject>>;
  components: { schemas: Record<string, JsonObject> };
}

const REF_PREFIX = '#/components/schemas/';

function collectRefs(node: Json, into: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const item of node) collectRefs(item, into);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(REF_PREFIX)) into.add(value.slice(REF_PREFIX.length));
      else collectRefs(value, into);
    }
  }
  return into;
}

/** A schema without its `description` annotations (a property named "description" stays). */
export function withoutDescriptions(node: Json): Json {
  if (Array.isArray(node)) return node.map(withoutDescriptions);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'description') continue;
    if (key === 'properties' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, withoutDescriptions(schema)]));
    } else out[key] = withoutDescriptions(value);
  }
  return out;
}

export function extractSubset(source: SourceDocument, note: SourceNote): StripeSubset {
  const paths: StripeSubset['paths'] = {};
  const pending: string[] = [...EXTRA_SCHEMAS];
  for (const [method, path] of OPERATIONS) {
    const operation = source.paths[path]?.[method];
    if (!operation) throw new Error(`the source describes no ${method.toUpperCase()} ${path}`);
    (paths[path] ??= {})[method] = operation;
    pending.push(...collectRefs(operation, new Set()));
  }
  const names = new Set<string>();
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (names.has(name)) continue;
    const schema = source.components.schemas[name];
    if (!schema) throw new Error(`the source has no component schema ${name}`);
    names.add(name);
    pending.push(...collectRefs(schema, new Set()));
  }
  const schemas = Object.fromEntries(
    [...names].sort().map((name) => [name, withoutDescriptions(source.components.schemas[name]) as JsonObject]),
  );
  return {
    openapi: source.openapi,
    info: { title: source.info.title, version: source.info.version },
    source: note,
    paths,
    components: { schemas },
  };
}

/**
 * The subset as committed: one line per operation and per component schema, so the file stays
 * compact (~460 KB) and a regenerated description diffs by schema.
 */
export function formatSubset(subset: StripeSubset): string {
  const entries = (record: Record<string, unknown>, indent: string) =>
    Object.entries(record)
      .map(([key, value]) => `${indent}${JSON.stringify(key)}: ${JSON.stringify(value)}`)
      .join(',\n');
  return [
    '{',
    ` "openapi": ${JSON.stringify(subset.openapi)},`,
    ` "info": ${JSON.stringify(subset.info)},`,
    ` "source": ${JSON.stringify(subset.source, null, 1).replace(/\n/g, '\n ')},`,
    ' "paths": {',
    entries(subset.paths, '  '),
    ' },',
    ' "components": {',
    '  "schemas": {',
    entries(subset.components.schemas, '   '),
    '  }',
    ' }',
    '}',
    '',
  ].join('\n');
}
