import express, { type RequestHandler } from 'express';
import type { OpenApiDocument } from '@sdx/contract';
import { RequestValidationError, type ValidationIssue } from '@sdx/domain/api';

/**
 * Bounds on what a request may carry, checked before anything reads it, so hostile input is a
 * 413 or a 422, never a 500 (a value Postgres refuses) and never a crash (a parser or a
 * renderer recursing through deep nesting). openapi.yaml documents them.
 */

/** Largest JSON body accepted (413 beyond). */
export const MAX_JSON_BYTES = 1024 * 1024;
/** Deepest nesting of arrays and objects in a JSON body (422 beyond); real bodies use 2. */
export const MAX_JSON_DEPTH = 32;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Raised while the body is read, before JSON.parse sees it; rendered as a 422. */
export class JsonTooDeep extends Error {
  readonly status = 422;
  readonly type = 'entity.too.deep';
  constructor() {
    super(`JSON nesting is deeper than ${MAX_JSON_DEPTH} levels`);
  }
}

/** Scans the raw bytes (strings skipped) so a too-deep body never reaches the recursive parser. */
function refuseDeepJson(_req: unknown, _res: unknown, buf: Buffer): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i += 1) {
    const byte = buf[i];
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth += 1;
      if (depth > MAX_JSON_DEPTH) throw new JsonTooDeep();
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
}

/** The JSON body parser, for operations that take a body. Any content type is read as JSON. */
export const jsonBody: RequestHandler = express.json({ limit: MAX_JSON_BYTES, type: () => true, verify: refuseDeepJson });

/**
 * Text Postgres cannot store: NUL (refused by text and jsonb) and unpaired UTF-16 surrogates
 * (refused by jsonb, silently replaced in text).
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

const STRICT_INTEGER = /^-?[0-9]+$/;

function unstorable(loc: (string | number)[], input: unknown): ValidationIssue {
  return { loc, msg: 'Input should not contain NUL characters or unpaired surrogates', type: 'string_unstorable', input };
}

/** Every string and key of a parsed JSON body that Postgres would refuse (depth already bounded). */
function bodyIssues(body: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const stack: Array<{ value: unknown; loc: (string | number)[] }> = [{ value: body, loc: ['body'] }];
  while (stack.length > 0 && issues.length < 20) {
    const { value, loc } = stack.pop()!;
    if (typeof value === 'string') {
      if (!isStorableText(value)) issues.push(unstorable(loc, value));
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, loc: [...loc, i] }));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (!isStorableText(key)) issues.push(unstorable([...loc, key], key));
        stack.push({ value: item, loc: [...loc, key] });
      }
    }
  }
  return issues;
}

interface ParameterObject {
  name: string;
  in: string;
  schema?: { type?: string };
  $ref?: string;
}

/** The query parameters openapi.yaml declares as integers for one operation. */
export function integerQueryParameters(document: OpenApiDocument, method: string, expressPath: string): Set<string> {
  const template = expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  const item = document.paths[template] as Record<string, unknown> | undefined;
  const operation = item?.[method] as { parameters?: ParameterObject[] } | undefined;
  const names = new Set<string>();
  for (const raw of [...((item?.parameters as ParameterObject[] | undefined) ?? []), ...(operation?.parameters ?? [])]) {
    const param = raw.$ref ? (resolve(document, raw.$ref) as ParameterObject) : raw;
    if (param?.in === 'query' && param.schema?.type === 'integer') names.add(param.name);
  }
  return names;
}

/** Whether openapi.yaml gives the operation a request body. */
export function takesBody(document: OpenApiDocument, method: string, expressPath: string): boolean {
  const template = expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  const operation = (document.paths[template] as Record<string, unknown> | undefined)?.[method] as { requestBody?: unknown } | undefined;
  return Boolean(operation?.requestBody);
}

function resolve(document: OpenApiDocument, ref: string): unknown {
  let node: unknown = document;
  for (const key of ref.replace(/^#\//, '').split('/')) node = (node as Record<string, unknown> | undefined)?.[key];
  return node;
}

/**
 * 422 for a path parameter, query value, header or body string Postgres cannot store, and for
 * an integer query parameter that is not plain decimal digits ("0x10", "1e3", "5 ", "Infinity"
 * are refused rather than coerced). Runs before schema validation.
 */
export function refuseUnstorableInput(integerQuery: ReadonlySet<string>): RequestHandler {
  return (req, _res, next) => {
    const issues: ValidationIssue[] = [];
    for (const [name, value] of Object.entries(req.params ?? {})) {
      if (typeof value === 'string' && !isStorableText(value)) issues.push(unstorable(['path', name], value));
    }
    for (const [name, value] of Object.entries((req.query ?? {}) as Record<string, unknown>)) {
      const values = Array.isArray(value) ? value : [value];
      if (!isStorableText(name) || values.some((v) => typeof v === 'string' && !isStorableText(v))) {
        issues.push(unstorable(['query', name], value));
      } else if (integerQuery.has(name) && !values.every((v) => typeof v === 'string' && STRICT_INTEGER.test(v))) {
        issues.push({ loc: ['query', name], msg: 'Input should be a valid integer', type: 'int_parsing', input: value });
      }
    }
    for (const [name, value] of Object.entries(req.headers)) {
      const values = Array.isArray(value) ? value : [value ?? ''];
      if (values.some((v) => !isStorableText(v))) issues.push(unstorable(['header', name], value));
    }
    if (req.body !== undefined) issues.push(...bodyIssues(req.body));
    if (issues.length > 0) throw new RequestValidationError(issues);
    next();
  };
}
