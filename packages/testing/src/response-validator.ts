import addFormats from 'ajv-formats';
import type { ErrorObject } from 'ajv';
import { dereferenceSync } from 'dereference-json-schema';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';
import { type Document, OpenAPIRouter, OpenAPIValidator, type Operation } from 'openapi-backend';
import { loadOpenApiDocument, type OpenApiDocument } from '@sdx/contract';

/**
 * Validates responses against openapi.yaml with openapi-backend: its router finds the
 * documented operation of a request, its validator checks a JSON body against the schema
 * documented for the status (ajv, with ajv-formats for `date-time`, `date`, ...). On top of
 * it, three checks openapi-backend leaves to the caller: the status must be documented for the
 * operation, a body's content type must be documented, and a status documented without
 * content must come without a body.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type Method = (typeof METHODS)[number];

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

function isJsonMediaType(mediaType: string): boolean {
  return mediaType === 'application/json' || /^application\/[^/]+\+json$/.test(mediaType);
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
 * A body that fails a `oneOf` told apart by an enum property (a service error's `error`, an
 * item's `kind`) fails every branch; the errors of the branches whose enum property did not match
 * say nothing. When some branch matched on it, only that branch's errors are kept.
 */
function relevantErrors(errors: ErrorObject[]): ErrorObject[] {
  let kept = errors;
  for (const oneOf of errors.filter((e) => e.keyword === 'oneOf')) {
    const branchOf = (e: ErrorObject) =>
      e.schemaPath.startsWith(`${oneOf.schemaPath}/`) ? e.schemaPath.slice(oneOf.schemaPath.length + 1).split('/')[0] : undefined;
    const branches = new Set(kept.map(branchOf).filter((b): b is string => b !== undefined));
    const mismatched = new Set(
      kept
        .filter(
          (e) =>
            e.keyword === 'enum' &&
            branchOf(e) !== undefined &&
            e.instancePath.slice(0, e.instancePath.lastIndexOf('/')) === oneOf.instancePath,
        )
        .map(branchOf),
    );
    if (mismatched.size === 0 || mismatched.size === branches.size) continue;
    kept = kept.filter((e) => e !== oneOf && !mismatched.has(branchOf(e)));
  }
  return kept;
}

/** A path segment decoded, or as sent when it is not valid percent-encoding. */
function decodeLenient(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Builds a validator over openapi.yaml (or the given document). Response schemas are compiled
 * on first use and cached by openapi-backend.
 */
export function createResponseValidator(document: OpenApiDocument = loadOpenApiDocument()): ResponseValidator {
  // openapi-backend compiles each response schema on its own, so every $ref is inlined first
  const definition = dereferenceSync(document) as unknown as Document;
  const router = new OpenAPIRouter({ definition, ignoreTrailingSlashes: false });
  const validator = new OpenAPIValidator({
    definition,
    router,
    lazyCompileValidators: true,
    ajvOpts: { allErrors: true },
    customizeAjv: (ajv) => addFormats(ajv),
  });

  function find(method: string, pathname: string): Operation | undefined {
    return router.matchOperation({ method, path: pathname, headers: {} });
  }

  function match(method: string, requestPath: string): MatchedOperation | undefined {
    const verb = method.toLowerCase() as Method;
    if (!METHODS.includes(verb)) return undefined;
    const operation = find(verb, requestPath.split(/[?#]/)[0]);
    if (!operation?.operationId) return undefined;
    const params: unknown = router.parseRequest({ method: verb, path: requestPath.split(/[?#]/)[0], headers: {} }, operation).params;
    const decoded: Record<string, string> = {};
    for (const [name, value] of Object.entries(params as Record<string, string>)) decoded[name] = decodeLenient(value);
    return { operationId: operation.operationId, method: verb, template: operation.path, params: decoded };
  }

  function validate(method: string, requestPath: string, status: number, body: unknown, contentType?: string): void {
    const context = `Response ${method.toUpperCase()} ${requestPath} ${status}`;
    const pathname = requestPath.split(/[?#]/)[0];
    const operation = find(method, pathname);
    if (!operation?.operationId) {
      const known = METHODS.some((verb) => find(verb, pathname) !== undefined);
      throw new ResponseContractError(
        [known ? `method ${method.toUpperCase()} is not documented for ${pathname}` : `path ${pathname} is not documented`],
        context,
      );
    }
    const { operationId } = operation;
    const responses = (operation.responses ?? {}) as Record<string, OpenAPIV3.ResponseObject>;
    const statusKey = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!statusKey) {
      throw new ResponseContractError(
        [`status ${status} is not documented for ${operationId} (documented: ${Object.keys(responses).join(', ')})`],
        context,
      );
    }
    const content = responses[statusKey].content ?? {};
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
    if (mediaType === undefined && !documentedTypes.some(isJsonMediaType)) return;

    const result = validator.validateResponse(body, operation, status);
    if (!result.valid) {
      throw new ResponseContractError(relevantErrors(result.errors ?? []).map(describeError), `${context} (${operationId})`);
    }
  }

  return { validate, match };
}
