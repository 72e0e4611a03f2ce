/**
 * The platforms' published references (trimmed copies in ../references, see its README) and the
 * checks built on them: the fakes reject what the reference does not name, and the conformance
 * tests check every request an adapter sends and every response a fake serves.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = Record<string, unknown>;

const DIR = join(__dirname, '..', 'references');
const cache = new Map<string, Json>();

/** One reference document by file name (parsed once). */
export function reference(name: 'x-openapi' | 'youtube-v3' | 'meta-graph' | 'tiktok-research' | 'scrapecreators-endpoints'): Json {
  let doc = cache.get(name);
  if (!doc) {
    doc = JSON.parse(readFileSync(join(DIR, `${name}.json`), 'utf8')) as Json;
    cache.set(name, doc);
  }
  return doc;
}

const o = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const a = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

// ---- a closed schema validator -------------------------------------------------------------

export interface SchemaDialect {
  /** Resolve a $ref to its schema. */
  resolve(ref: string): Json;
}

/**
 * Validates `value` against an OpenAPI 3.0 (X) or discovery (YouTube) schema, closed: a property
 * the schema does not declare is an error (unless it declares additionalProperties), as are a
 * wrong JSON type, a value outside an enum and a missing required property. Returns the problems
 * found, each with its JSON path; none means the value conforms.
 */
export function validate(value: unknown, schema: Json, dialect: SchemaDialect, path = '$'): string[] {
  if (typeof schema.$ref === 'string') return validate(value, dialect.resolve(schema.$ref), dialect, path);
  const discriminator = o(schema.discriminator);
  if (typeof discriminator.propertyName === 'string' && discriminator.propertyName && value && typeof value === 'object') {
    const tag = (value as Json)[discriminator.propertyName];
    const target = typeof tag === 'string' ? o(discriminator.mapping)[tag] : undefined;
    if (typeof target === 'string') {
      const rest = { ...schema };
      delete rest.discriminator;
      const mapped = dialect.resolve(target);
      // The mapped schema usually extends this one through allOf: validate against it alone.
      return validate(value, mapped, dialect, path);
    }
  }
  if (value === null)
    return schema.nullable === true
      ? []
      : [`${path}: null where the reference has ${typeof schema.type === 'string' ? schema.type : 'a value'}`];
  const alternatives = a(schema.oneOf).length > 0 ? a(schema.oneOf) : a(schema.anyOf);
  if (alternatives.length > 0) {
    const results = alternatives.map((alt) => validate(value, o(alt), dialect, path));
    return results.some((r) => r.length === 0)
      ? []
      : [`${path}: matches none of the alternatives (${results.map((r) => r[0]).join(' | ')})`];
  }
  const merged = merge(schema, dialect);
  const type = merged.type;
  const errors: string[] = [];
  if (Array.isArray(merged.enum) && !merged.enum.includes(value))
    errors.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(merged.enum)}`);
  switch (type) {
    case 'string':
      if (typeof value !== 'string') errors.push(`${path}: ${typeof value} where the reference has a string`);
      return errors;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value))
        errors.push(`${path}: ${JSON.stringify(value)} where the reference has an integer`);
      return errors;
    case 'number':
      if (typeof value !== 'number') errors.push(`${path}: ${typeof value} where the reference has a number`);
      return errors;
    case 'boolean':
      if (typeof value !== 'boolean') errors.push(`${path}: ${typeof value} where the reference has a boolean`);
      return errors;
    case 'array':
      if (!Array.isArray(value)) return [...errors, `${path}: ${typeof value} where the reference has an array`];
      value.forEach((item, i) => errors.push(...validate(item, o(merged.items), dialect, `${path}[${i}]`)));
      return errors;
    case 'any':
      return errors;
  }
  if (type === 'object' || merged.properties !== undefined) {
    if (typeof value !== 'object' || Array.isArray(value))
      return [...errors, `${path}: ${Array.isArray(value) ? 'array' : typeof value} where the reference has an object`];
    const properties = o(merged.properties);
    const extra = merged.additionalProperties;
    for (const required of a(merged.required)) {
      if (!(String(required) in (value as Json))) errors.push(`${path}: required property "${String(required)}" is missing`);
    }
    for (const [key, v] of Object.entries(value as Json)) {
      if (key in properties) errors.push(...validate(v, o(properties[key]), dialect, `${path}.${key}`));
      else if (extra && typeof extra === 'object') errors.push(...validate(v, o(extra), dialect, `${path}.${key}`));
      else if (extra !== true) errors.push(`${path}: property "${key}" is not in the reference`);
    }
  }
  return errors;
}

/** A schema with its allOf branches folded in (properties and required lists united). */
function merge(schema: Json, dialect: SchemaDialect): Json {
  const branches = a(schema.allOf);
  if (branches.length === 0) return schema;
  const out: Json = { ...schema, properties: { ...o(schema.properties) }, required: [...a(schema.required)] };
  delete out.allOf;
  for (const b of branches) {
    let branch = o(b);
    if (typeof branch.$ref === 'string') branch = dialect.resolve(branch.$ref);
    branch = merge(branch, dialect);
    out.type ??= branch.type;
    Object.assign(out.properties as Json, o(branch.properties));
    (out.required as unknown[]).push(...a(branch.required));
    if (branch.additionalProperties !== undefined) out.additionalProperties ??= branch.additionalProperties;
  }
  return out;
}

// ---- X -----------------------------------------------------------------------------------------

export const xDialect: SchemaDialect = {
  resolve(ref) {
    const [, , kind, name] = ref.split('/');
    const found = o(o(o(reference('x-openapi').components)[kind ?? ''])[name ?? '']);
    if (Object.keys(found).length === 0) throw new Error(`x reference has no ${ref}`);
    return found;
  },
};

export interface XOperation {
  template: string;
  /** Query parameters by name: their schema (resolved). */
  query: Map<string, Json>;
  /** Schema of the 200 body. */
  response: Json;
}

/** The X operation whose path template matches `path`, or undefined. */
export function xOperation(path: string): XOperation | undefined {
  for (const [template, item] of Object.entries(o(reference('x-openapi').paths))) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (!pattern.test(path)) continue;
    const op = o(o(item).get);
    const query = new Map<string, Json>();
    for (const raw of a(op.parameters)) {
      const p = typeof o(raw).$ref === 'string' ? xDialect.resolve(String(o(raw).$ref)) : o(raw);
      if (p.in === 'query') query.set(String(p.name), o(p.schema));
    }
    const response = o(o(o(o(o(op.responses)['200']).content)['application/json']).schema);
    return { template, query, response };
  }
  return undefined;
}

/**
 * What is wrong with an X query against the reference: unknown parameters, and comma-list values
 * (fields, expansions) outside their enum. Empty when it conforms.
 */
export function xQueryProblems(path: string, query: Record<string, string>): Array<{ parameter: string; value: string; message: string }> {
  const op = xOperation(path);
  if (!op) return [{ parameter: 'path', value: path, message: `no X operation at ${path}` }];
  const out: Array<{ parameter: string; value: string; message: string }> = [];
  for (const [name, value] of Object.entries(query)) {
    const schema = op.query.get(name);
    if (!schema) {
      out.push({ parameter: name, value, message: `The query parameter [${name}] is not one of [${[...op.query.keys()].join(',')}]` });
      continue;
    }
    const allowed = a(o(schema.items).enum);
    if (schema.type === 'array' && allowed.length > 0) {
      for (const v of value.split(',')) {
        if (!allowed.includes(v))
          out.push({
            parameter: name,
            value: v,
            message: `The \`${name}\` query parameter value [${v}] is not one of [${allowed.join(',')}]`,
          });
      }
    }
  }
  return out;
}

// ---- YouTube -----------------------------------------------------------------------------------

export const youtubeDialect: SchemaDialect = {
  resolve(ref) {
    const found = o(o(reference('youtube-v3').schemas)[ref]);
    if (Object.keys(found).length === 0) throw new Error(`youtube reference has no schema ${ref}`);
    return found;
  },
};

export interface YouTubeMethod {
  parameters: Json;
  response: string;
  /** The resource schema of `items` (its properties are the valid `part` values). */
  resource: Json;
}

export function youtubeMethod(path: string): YouTubeMethod | undefined {
  const m = o(o(reference('youtube-v3').methods)[`GET ${path}`]);
  if (typeof m.response !== 'string' || !m.response) return undefined;
  const response = m.response;
  const items = o(o(o(youtubeDialect.resolve(response).properties).items).items);
  return { parameters: o(m.parameters), response, resource: youtubeDialect.resolve(String(items.$ref)) };
}

/** Unknown parameters and unknown parts of a YouTube list request; empty when it conforms. */
export function youtubeQueryProblems(path: string, query: Record<string, string>): Array<{ kind: 'parameter' | 'part'; name: string }> {
  const m = youtubeMethod(path);
  if (!m) return [{ kind: 'parameter', name: path }];
  const standard = o(reference('youtube-v3').standardParameters);
  const out: Array<{ kind: 'parameter' | 'part'; name: string }> = [];
  for (const name of Object.keys(query)) if (!(name in m.parameters) && !(name in standard)) out.push({ kind: 'parameter', name });
  const parts = Object.keys(o(m.resource.properties)).filter((p) => !['etag', 'kind', 'id'].includes(p));
  for (const part of (query.part ?? '').split(',').filter(Boolean)) if (!parts.includes(part)) out.push({ kind: 'part', name: part });
  return out;
}

// ---- Meta ads_archive ---------------------------------------------------------------------------

/** Unknown parameters and fields of an ads_archive request; empty when it conforms. */
export function adsArchiveProblems(query: Record<string, string>): string[] {
  const ref = o(reference('meta-graph').ads_archive);
  const params = a(ref.parameters).map(String);
  const fields = Object.keys(o(ref.fields));
  const out: string[] = [];
  for (const name of Object.keys(query)) if (!params.includes(name)) out.push(`parameter ${name}`);
  for (const f of (query.fields ?? '').split(',').filter(Boolean)) if (!fields.includes(f)) out.push(`field ${f}`);
  if (query.ad_active_status && !a(ref.ad_active_status).includes(query.ad_active_status))
    out.push(`ad_active_status ${query.ad_active_status}`);
  if (query.ad_type && !a(ref.ad_type).includes(query.ad_type)) out.push(`ad_type ${query.ad_type}`);
  return out;
}

export const GRAPH_VERSION = String(reference('meta-graph').version);

// ---- TikTok --------------------------------------------------------------------------------------

/** Unknown `fields` and body keys of a TikTok Research / Commercial Content request. */
export function tiktokProblems(path: string, fields: string, body: unknown): string[] {
  const ep = o(o(reference('tiktok-research').endpoints)[path]);
  if (!ep.fields) return [`endpoint ${path}`];
  const out: string[] = [];
  for (const f of fields.split(',').filter(Boolean)) if (!a(ep.fields).includes(f)) out.push(`field ${f}`);
  for (const k of Object.keys(o(body))) if (!a(ep.body).includes(k)) out.push(`body key ${k}`);
  const query = o(o(body).query);
  for (const c of [...a(query.and), ...a(query.or), ...a(query.not)]) {
    if (!a(ep.condition_fields).includes(o(c).field_name)) out.push(`condition field ${String(o(c).field_name)}`);
    if (!a(ep.operations).includes(o(c).operation)) out.push(`condition operation ${String(o(c).operation)}`);
  }
  return out;
}

// ---- ScrapeCreators --------------------------------------------------------------------------------

export interface VendorEndpoint {
  params: Array<{ name: string; type: string; required: boolean }>;
  sampleResponse: unknown;
}

export function vendorEndpoint(path: string): VendorEndpoint | undefined {
  const ep = o(reference('scrapecreators-endpoints')[path]);
  return ep.params ? (ep as unknown as VendorEndpoint) : undefined;
}

/** Unknown and missing required parameters of a vendor request; empty when it conforms. */
export function vendorQueryProblems(path: string, query: Record<string, string>): string[] {
  const ep = vendorEndpoint(path);
  if (!ep) return [`endpoint ${path}`];
  const out: string[] = [];
  const names = ep.params.map((p) => p.name);
  for (const name of Object.keys(query)) if (!names.includes(name)) out.push(`parameter ${name}`);
  for (const p of ep.params) if (p.required && !(p.name in query)) out.push(`missing ${p.name}`);
  return out;
}

/**
 * Checks a vendor response against the endpoint's sample response, closed: every key must occur
 * in the sample at the same place, with the same JSON type (null in either is accepted).
 */
export function vendorResponseProblems(path: string, body: unknown): string[] {
  const ep = vendorEndpoint(path);
  if (!ep) return [`endpoint ${path}`];
  const out: string[] = [];
  const walk = (value: unknown, sample: unknown, at: string): void => {
    if (value === null || sample === null || sample === undefined) return;
    const kind = (v: unknown): string => (Array.isArray(v) ? 'array' : typeof v);
    if (kind(value) !== kind(sample)) {
      out.push(`${at}: ${kind(value)} where the sample has ${kind(sample)}`);
      return;
    }
    if (Array.isArray(value)) {
      const first = (sample as unknown[])[0];
      if (first !== undefined) value.forEach((v, i) => walk(v, first, `${at}[${i}]`));
      return;
    }
    if (typeof value === 'object') {
      for (const [k, v] of Object.entries(value as Json)) {
        if (!(k in (sample as Json))) out.push(`${at}: property "${k}" is not in the sample`);
        else walk(v, (sample as Json)[k], `${at}.${k}`);
      }
    }
  };
  walk(body, ep.sampleResponse, '$');
  return out;
}
