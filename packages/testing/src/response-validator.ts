import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';
import { loadOpenApiDocument, type OpenApiDocument } from '@sdx/contract';

/**
 * Validates responses against openapi.yaml: the path and method must be documented, the status
 * must be documented for that operation, and a JSON body must match the response schema.
 * Schemas are OpenAPI 3.0: `nullable` is handled by ajv's own `nullable` keyword (the same
 * semantics express-openapi-validator applies to requests).
 */

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type Method = (typeof METHODS)[number];

/** `$id` under which the document's components are registered with ajv. */
const DOCUMENT_ID = 'openapi-contract';

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

interface Route {
  template: string;
  regex: RegExp;
  paramNames: string[];
  item: OpenAPIV3.PathItemObject;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function compileRoute(template: string, item: OpenAPIV3.PathItemObject): Route {
  const paramNames: string[] = [];
  const pattern = template
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const param = /^\{([^}]+)\}$/.exec(part);
      if (param) {
        paramNames.push(param[1]);
        return '([^/]+)';
      }
      return escapeRegex(part);
    })
    .join('');
  return { template, regex: new RegExp(`^${pattern}$`), paramNames, item };
}

/** Deep copy with every local `$ref` (`#/...`) pointed at the registered document. */
function rebaseRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rebaseRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof child === 'string' && child.startsWith('#/') ? `${DOCUMENT_ID}${child}` : rebaseRefs(child);
  }
  return out;
}

function resolvePointer(document: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`Only local references are supported, got ${ref}`);
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) {
      throw new Error(`Unresolvable reference ${ref}`);
    }
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function deref<T>(document: OpenApiDocument, value: T | OpenAPIV3.ReferenceObject): T {
  let current: unknown = value;
  for (let depth = 0; depth < 10; depth += 1) {
    if (current !== null && typeof current === 'object' && '$ref' in current && typeof current.$ref === 'string') {
      current = resolvePointer(document, current.$ref);
    } else {
      return current as T;
    }
  }
  throw new Error('Reference chain too deep');
}

function mediaTypeOf(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

function isJsonMediaType(mediaType: string): boolean {
  return mediaType === 'application/json' || /^application\/[^/]+\+json$/.test(mediaType);
}

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
 * Builds a validator over openapi.yaml (or the given document). Response schemas are compiled
 * on first use and cached.
 */
export function createResponseValidator(document: OpenApiDocument = loadOpenApiDocument()): ResponseValidator {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components: rebaseRefs(document.components ?? {}) });

  // Literal paths win over templates (a `/v1/usage/current` beats `/v1/usage/{id}`).
  const routes = Object.entries(document.paths)
    .map(([template, item]) => compileRoute(template, item))
    .sort((a, b) => a.paramNames.length - b.paramNames.length);

  const compiled = new Map<string, ValidateFunction>();

  function match(method: string, requestPath: string): MatchedOperation | undefined {
    const verb = method.toLowerCase() as Method;
    if (!METHODS.includes(verb)) return undefined;
    const pathname = requestPath.split(/[?#]/)[0];
    for (const route of routes) {
      const found = route.regex.exec(pathname);
      if (!found) continue;
      const operation = route.item[verb];
      if (!operation) continue;
      const params: Record<string, string> = {};
      route.paramNames.forEach((name, i) => {
        params[name] = decodeLenient(found[i + 1]!);
      });
      return { operationId: operation.operationId ?? `${verb} ${route.template}`, method: verb, template: route.template, params };
    }
    return undefined;
  }

  function validatorFor(key: string, schema: unknown): ValidateFunction {
    let fn = compiled.get(key);
    if (!fn) {
      fn = ajv.compile(rebaseRefs(schema) as object);
      compiled.set(key, fn);
    }
    return fn;
  }

  function validate(method: string, requestPath: string, status: number, body: unknown, contentType?: string): void {
    const context = `Response ${method.toUpperCase()} ${requestPath} ${status}`;
    const matched = match(method, requestPath);
    if (!matched) {
      const pathname = requestPath.split(/[?#]/)[0];
      const known = routes.some((r) => r.regex.test(pathname));
      throw new ResponseContractError(
        [known ? `method ${method.toUpperCase()} is not documented for ${pathname}` : `path ${pathname} is not documented`],
        context,
      );
    }
    const operation = document.paths[matched.template][matched.method] as OpenAPIV3.OperationObject;
    const responses = operation.responses ?? {};
    const statusKey = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!statusKey) {
      throw new ResponseContractError(
        [`status ${status} is not documented for ${matched.operationId} (documented: ${Object.keys(responses).join(', ')})`],
        context,
      );
    }
    const response = deref<OpenAPIV3.ResponseObject>(document, responses[statusKey]);
    const content = response.content ?? {};
    const documentedTypes = Object.keys(content);

    if (documentedTypes.length === 0) {
      if (!isEmptyBody(body)) throw new ResponseContractError([`status ${status} documents no body, but one was sent`], context);
      return;
    }

    const mediaType = contentType === undefined ? undefined : mediaTypeOf(contentType);
    if (mediaType !== undefined && !isJsonMediaType(mediaType)) {
      if (!documentedTypes.includes(mediaType)) {
        throw new ResponseContractError(
          [`content type ${mediaType} is not documented (documented: ${documentedTypes.join(', ')})`],
          context,
        );
      }
      return;
    }
    const jsonType = mediaType ?? documentedTypes.find(isJsonMediaType);
    if (jsonType === undefined) return; // no content type given and only non-JSON bodies documented
    const media = content[jsonType];
    if (!media) {
      throw new ResponseContractError(
        [`content type ${jsonType} is not documented (documented: ${documentedTypes.join(', ')})`],
        context,
      );
    }
    if (!media.schema) return;
    const fn = validatorFor(`${matched.operationId} ${statusKey} ${jsonType}`, media.schema);
    if (!fn(body)) {
      throw new ResponseContractError((fn.errors ?? []).map(describeError), `${context} (${matched.operationId})`);
    }
  }

  return { validate, match };
}

/** A path segment decoded, or as sent when it is not valid percent-encoding. */
function decodeLenient(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
