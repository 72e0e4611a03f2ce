import type { ErrorObject } from 'ajv';
import type { OpenApiDocument } from '@sdx/contract';
import {
  compileResponseSchemas,
  contractResponseSchemas,
  isJsonMediaType,
  METHODS,
  valueAt,
  type DocumentedOperation,
  type Method,
  type ResponseSchemas,
} from './response-schemas';

/**
 * Validates responses against openapi.yaml: finds the documented operation of a request (as
 * openapi-backend's router did: a path's exact template first, then the templates that match,
 * the most specific first), and checks a JSON body against the schema documented for its status
 * and content type, compiled by ajv with ajv-formats (response-schemas.ts). Also checked: the
 * status must be documented for the operation, a body's content type must be documented, and a
 * status documented without content must come without a body.
 */

export interface MatchedOperation {
  operationId: string;
  method: Method;
  /** Path template of openapi.yaml, e.g. `/v1/jobs/{job_id}/cancel`. */
  template: string;
  params: Record<string, string>;
}

export interface ResponseValidator {
  /** Throws a ResponseContractError when the response is not what openapi.yaml documents. */
  validate(method: string, requestPath: string, status: number, body: unknown, contentType?: string): void;
  /** The documented operation a request reaches, or undefined when the path or method is undocumented. */
  match(method: string, requestPath: string): MatchedOperation | undefined;
}

export class ResponseContractError extends Error {
  constructor(
    readonly problems: string[],
    context: string,
  ) {
    super(`${context} does not match openapi.yaml:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ResponseContractError';
  }
}

function mediaTypeOf(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

/** supertest reports an empty JSON-less body as `{}`. */
function isEmptyBody(body: unknown): boolean {
  if (body === undefined || body === null || body === '') return true;
  if (Buffer.isBuffer(body)) return body.length === 0;
  return typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0;
}

function describeError(error: ErrorObject): string {
  const where = error.instancePath === '' ? '(root)' : error.instancePath;
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return `${where} has unexpected property "${String(params.additionalProperty)}"`;
  if (error.keyword === 'required') return `${where} is missing property "${String(params.missingProperty)}"`;
  if (error.keyword === 'enum') return `${where} ${error.message ?? 'is not allowed'}: ${JSON.stringify(params.allowedValues)}`;
  return `${where} ${error.message ?? `fails ${error.keyword}`}`;
}

/**
 * The errors of each branch of the `oneOf` whose error is `oneOf`, as they stand in `preceding`
 * (the errors ajv reported before it): ajv reports a `oneOf`'s error right after its branches',
 * in branch order, stopping after a second branch that passes. The errors of a branch held by a
 * referenced schema carry schema paths relative to that schema, so the branches are told apart
 * by validating the value against each branch again: the `oneOf` whose branches report exactly
 * the errors before its error is the one. Undefined when none does.
 */
function branchErrors(
  oneOf: ErrorObject,
  preceding: readonly ErrorObject[],
  body: unknown,
  schemas: ResponseSchemas,
): ErrorObject[][] | undefined {
  const value = valueAt(body, oneOf.instancePath);
  if (value === undefined) return undefined;
  const same = (a: ErrorObject, b: ErrorObject) =>
    a.keyword === b.keyword &&
    a.instancePath === b.instancePath &&
    a.message === b.message &&
    JSON.stringify(a.params) === JSON.stringify(b.params);
  for (const location of schemas.oneOfs()) {
    if (!location.pointer.endsWith(oneOf.schemaPath.slice(1))) continue;
    const chunks: ErrorObject[][] = [];
    let passed = 0;
    for (let i = 0; i < location.branches && passed < 2; i++) {
      const validate = schemas.validator(`${location.pointer}/${i}`);
      if (!validate) break;
      if (validate(value)) passed += 1;
      chunks.push((validate.errors ?? []).map((e) => ({ ...e, instancePath: `${oneOf.instancePath}${e.instancePath}` })));
    }
    if (chunks.length < location.branches && passed < 2) continue;
    const again = chunks.flat();
    if (again.length > preceding.length) continue;
    const segment = preceding.slice(preceding.length - again.length);
    if (!again.every((e, i) => same(e, segment[i]))) continue;
    let offset = 0;
    return chunks.map((chunk) => segment.slice(offset, (offset += chunk.length)));
  }
  return undefined;
}

/**
 * A body that fails a `oneOf` told apart by an enum property (a service error's `error`, an
 * item's `kind`) fails every branch; the errors of the branches whose enum property did not match
 * say nothing. When some branch matched on it, only that branch's errors are kept. `oneOf`s are
 * taken from the last: a `oneOf` inside a branch of another reports its error before the other's.
 */
function relevantErrors(errors: readonly ErrorObject[], body: unknown, schemas: ResponseSchemas): ErrorObject[] {
  let at = errors.length - 1;
  while (at >= 0 && errors[at].keyword !== 'oneOf') at -= 1;
  if (at < 0) return [...errors];
  const oneOf = errors[at];
  const after = errors.slice(at + 1);
  const branches = branchErrors(oneOf, errors.slice(0, at), body, schemas);
  if (!branches) return [...relevantErrors(errors.slice(0, at), body, schemas), oneOf, ...after];
  const before = errors.slice(0, at - branches.flat().length);
  const kept = branches.map((chunk) => relevantErrors(chunk, body, schemas));
  const failing = kept.filter((chunk) => chunk.length > 0);
  const mismatched = failing.filter((chunk) =>
    chunk.some((e) => e.keyword === 'enum' && e.instancePath.slice(0, e.instancePath.lastIndexOf('/')) === oneOf.instancePath),
  );
  const narrowed = mismatched.length > 0 && mismatched.length < failing.length;
  return [
    ...relevantErrors(before, body, schemas),
    ...(narrowed ? failing.filter((chunk) => !mismatched.includes(chunk)) : kept).flat(),
    ...(narrowed ? [] : [oneOf]),
    ...after,
  ];
}

/** A path segment decoded, or as sent when it is not valid percent-encoding. */
function decodeLenient(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

interface Route extends DocumentedOperation {
  /** The template as openapi-backend's router matched it: each `{name}` any segment. */
  pattern: RegExp;
  /** The template's parameters as openapi-backend read them (bath): names, and a pattern capturing each. */
  names: string[];
  params: RegExp;
  /** Length of the template without its parameters: the longer, the more specific. */
  specificity: number;
}

/**
 * How openapi-backend's router (apiRoot `/`, trailing slashes significant) found the operation
 * of a request: the operation whose template is the path itself, else the most specific
 * template matching the path (in document order among equals) that has the method.
 */
function routerOf(operations: readonly DocumentedOperation[]) {
  const routes: Route[] = operations.map((operation) => ({
    ...operation,
    pattern: new RegExp(`^${operation.template.replace(/\{.*?\}/g, '[^/]+')}$`),
    names: (operation.template.match(/\{[A-Za-z0-9_-]+\}/g) ?? []).map((name) => name.slice(1, -1)),
    params: new RegExp(`^${operation.template.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)')}$`),
    specificity: operation.template.replace(/\{.*?\}/g, '').length,
  }));
  const bySpecificity = [...routes].sort((a, b) => b.specificity - a.specificity);

  function normalize(requestPath: string): string {
    const trimmed = requestPath.trim();
    const rooted = (trimmed.startsWith('/') ? trimmed : `/${trimmed}`).split('?')[0];
    return rooted.trim().replace(/^\/\/?/, '/');
  }

  function find(method: string, requestPath: string): Route | undefined {
    const verb = method.trim().toLowerCase();
    const pathname = normalize(requestPath);
    return (
      routes.find((route) => route.template === pathname && route.method === verb) ??
      bySpecificity.find((route) => route.pattern.test(pathname) && route.method === verb)
    );
  }

  /** The path parameters of a path the route matched, as sent (undecoded); none when they disagree. */
  function params(route: Route, requestPath: string): Record<string, string> {
    const values = route.params.exec(normalize(requestPath))?.slice(1);
    if (!values) return {};
    const found: Record<string, string> = {};
    for (const [i, name] of route.names.entries()) {
      if (name in found && found[name] !== values[i]) return {};
      found[name] = values[i];
    }
    return found;
  }

  return { find, params };
}

/**
 * Builds a validator over openapi.yaml, whose operations and compiled response schemas are kept
 * beside the code once per contract (response-schemas.ts), or over the given document, compiled
 * in this process as its schemas are used.
 */
export function createResponseValidator(document?: OpenApiDocument): ResponseValidator {
  const schemas = document ? compileResponseSchemas(document) : contractResponseSchemas();
  const router = routerOf(schemas.operations);

  function match(method: string, requestPath: string): MatchedOperation | undefined {
    const verb = method.toLowerCase() as Method;
    if (!METHODS.includes(verb)) return undefined;
    const pathname = requestPath.split(/[?#]/)[0];
    const operation = router.find(verb, pathname);
    if (!operation) return undefined;
    const decoded: Record<string, string> = {};
    for (const [name, value] of Object.entries(router.params(operation, pathname))) decoded[name] = decodeLenient(value);
    return { operationId: operation.operationId, method: verb, template: operation.template, params: decoded };
  }

  function validate(method: string, requestPath: string, status: number, body: unknown, contentType?: string): void {
    const context = `Response ${method.toUpperCase()} ${requestPath} ${status}`;
    const pathname = requestPath.split(/[?#]/)[0];
    const operation = router.find(method, pathname);
    if (!operation) {
      const known = METHODS.some((verb) => router.find(verb, pathname) !== undefined);
      throw new ResponseContractError(
        [known ? `method ${method.toUpperCase()} is not documented for ${pathname}` : `path ${pathname} is not documented`],
        context,
      );
    }
    const { operationId, responses } = operation;
    const statusKey = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!statusKey) {
      throw new ResponseContractError(
        [`status ${status} is not documented for ${operationId} (documented: ${Object.keys(responses).join(', ')})`],
        context,
      );
    }
    const content = responses[statusKey];
    const documentedTypes = Object.keys(content);

    if (documentedTypes.length === 0) {
      if (!isEmptyBody(body)) throw new ResponseContractError([`status ${status} documents no body, but one was sent`], context);
      return;
    }

    const mediaType = contentType === undefined ? undefined : mediaTypeOf(contentType);
    if (mediaType !== undefined && !documentedTypes.includes(mediaType)) {
      throw new ResponseContractError([`content type ${mediaType} is not documented (documented: ${documentedTypes.join(', ')})`], context);
    }
    if (mediaType !== undefined && !isJsonMediaType(mediaType)) return; // a download: its bytes are not checked
    const jsonType =
      mediaType ?? (documentedTypes.includes('application/json') ? 'application/json' : documentedTypes.find(isJsonMediaType));
    const pointer = jsonType === undefined ? null : content[jsonType];
    if (!pointer) return;

    const check = schemas.validator(pointer);
    if (!check) throw new Error(`no compiled schema at ${pointer}`);
    if (!check(body)) {
      // A copy: the branches of a oneOf are validated again before these errors are read.
      const errors = [...(check.errors ?? [])];
      throw new ResponseContractError(relevantErrors(errors, body, schemas).map(describeError), `${context} (${operationId})`);
    }
  }

  return { validate, match };
}
