import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { faultOf, isUnavailableError } from '@sdx/config';
import { MAX_JSON_BYTES, MAX_JSON_DEPTH } from './input';
import { ApiError, GroupCommitOverloaded, RequestValidationError, StoreUnavailable, type ValidationIssue } from '@sdx/domain/api';

/** One validator error as express-openapi-validator reports it. */
interface ValidatorItem {
  path?: string;
  message?: string;
  errorCode?: string;
  params?: Record<string, unknown>;
}

interface ValidatorError {
  status?: number;
  errors?: ValidatorItem[];
  message?: string;
}

/** Maps an ajv/openapi error code to the pydantic-style type callers know. */
function issueType(item: ValidatorItem): string {
  const code = (item.errorCode ?? '').replace(/\.openapi\.(validation|requestValidation)$/, '');
  const message = item.message ?? '';
  switch (code) {
    case 'required':
      return 'missing';
    case 'additionalProperties':
      return 'extra_forbidden';
    case 'minimum':
    case 'exclusiveMinimum':
      return 'greater_than_equal';
    case 'maximum':
    case 'exclusiveMaximum':
      return 'less_than_equal';
    case 'minLength':
      return 'string_too_short';
    case 'maxLength':
      return 'string_too_long';
    case 'minItems':
      return 'too_short';
    case 'maxItems':
      return 'too_long';
    case 'enum':
      return 'enum';
    case 'format':
      return /date-time/.test(message) ? 'datetime_from_date_parsing' : 'value_error';
    case 'pattern':
      return 'string_pattern_mismatch';
    case 'type': {
      if (/integer/.test(message)) return 'int_parsing';
      if (/number/.test(message)) return 'float_parsing';
      if (/boolean/.test(message)) return 'bool_parsing';
      if (/string/.test(message)) return 'string_type';
      if (/array/.test(message)) return 'list_type';
      if (/object/.test(message)) return 'model_type';
      return 'type_error';
    }
    default:
      return 'value_error';
  }
}

function humanMessage(item: ValidatorItem, type: string, bound: Bound | null): string {
  const message = item.message ?? 'Invalid value';
  switch (type) {
    case 'missing':
      return 'Field required';
    case 'extra_forbidden':
      return 'Extra inputs are not permitted';
    case 'int_parsing':
      return 'Input should be a valid integer';
    case 'float_parsing':
      return 'Input should be a valid number';
    case 'bool_parsing':
      return 'Input should be a valid boolean';
    case 'string_type':
      return 'Input should be a valid string';
    case 'list_type':
      return 'Input should be a valid list';
    case 'model_type':
      return 'Input should be a valid dictionary';
    default: {
      if (bound?.unit)
        return `${bound.unit === 'characters' ? 'String' : 'List'} should have at ${bound.key === 'max_length' ? 'most' : 'least'} ${bound.value} ${bound.unit}`;
      if (bound) return `Input should be ${bound.key === 'le' ? 'less' : 'greater'} than or equal to ${bound.value}`;
      const allowed = /must be equal to one of the allowed values:? ?(.*)$/.exec(message);
      if (allowed) return `Input should be one of the allowed values${allowed[1] ? `: ${allowed[1]}` : ''}`;
      return message.charAt(0).toUpperCase() + message.slice(1);
    }
  }
}

/** A segment of the validator's path decoded, or as it is when it is not percent-encoding (a key such as "50%"). */
function decodeLenient(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** "/body/targets/3" → ["body", "targets", 3]; header names lower-case. */
function toLoc(item: ValidatorItem, type: string): (string | number)[] {
  const parts = (item.path ?? '')
    .replace(/^\./, '')
    .split(/[/.]/)
    .filter(Boolean)
    .map((p) => (/^\d+$/.test(p) ? Number(p) : decodeLenient(p)));
  if (parts[0] === 'headers') parts[0] = 'header';
  if (parts.length === 0) parts.push('body');
  const extra = item.params?.additionalProperty;
  if (type === 'extra_forbidden' && typeof extra === 'string' && parts[parts.length - 1] !== extra) parts.push(extra);
  const missing = item.params?.missingProperty;
  if (type === 'missing' && typeof missing === 'string' && parts[parts.length - 1] !== missing) parts.push(missing);
  return parts;
}

/** The bound a failed check names (read from the validator's message), keyed as pydantic's ctx. */
interface Bound {
  key: 'le' | 'ge' | 'max_length' | 'min_length';
  value: string;
  /** For lengths: what is counted. */
  unit: 'characters' | 'items' | null;
}

function boundOf(item: ValidatorItem): Bound | null {
  const message = item.message ?? '';
  const limit = /must be (<=|>=) (-?\d+(?:\.\d+)?)$/.exec(message);
  if (limit) return { key: limit[1] === '<=' ? 'le' : 'ge', value: limit[2], unit: null };
  const length = /must NOT have (more|fewer) than (\d+) (characters|items)$/.exec(message);
  if (length)
    return { key: length[1] === 'more' ? 'max_length' : 'min_length', value: length[2], unit: length[3] as 'characters' | 'items' };
  return null;
}

const SECRET_FIELD = /password|token|secret/i;

export function validatorIssues(error: ValidatorError, body: unknown): ValidationIssue[] {
  return (error.errors ?? []).map((item) => {
    const type = issueType(item);
    const loc = toLoc(item, type);
    const bound = boundOf(item);
    const issue: ValidationIssue = { loc, msg: humanMessage(item, type, bound), type };
    if (bound) issue.ctx = { [bound.key]: Number(bound.value) };
    // A secret sent in a body (a password, a token) is not echoed back.
    if (loc[0] === 'body' && !SECRET_FIELD.test(String(loc[loc.length - 1]))) {
      let value: unknown = body;
      for (const key of loc.slice(1))
        value = value && typeof value === 'object' ? (value as Record<string | number, unknown>)[key] : undefined;
      if (value !== undefined && type !== 'missing') issue.input = value;
    }
    return issue;
  });
}

/** The pool could not hand out a connection in time, or too many writes wait: temporary. */
function isOverload(err: unknown): boolean {
  if (err instanceof GroupCommitOverloaded) return true;
  const message = err instanceof Error ? err.message : '';
  return /timeout exceeded when trying to connect/i.test(message);
}

/** Seconds a client should wait before retrying a 503: a restarting Postgres is back in a few. */
const RETRY_AFTER_OVERLOADED = '1';
const RETRY_AFTER_UNAVAILABLE = '2';

/**
 * A fault of a dependency as the service error it is: the database overloaded, or Postgres or
 * Redis unavailable, is 503 service_unavailable with Retry-After (logged once per outage
 * elsewhere, so at debug here); anything else is null, a fault of ours. Used by the renderer and
 * by MCP's tool results, so both name a dependency's fault alike.
 */
export function dependencyError(err: unknown, log: Logger, requestId: unknown): ApiError | null {
  if (isOverload(err)) {
    log.warn({ fault: faultOf(err), requestId }, 'database overloaded');
    return new ApiError(
      'service_unavailable',
      'The service is overloaded; retry with backoff.',
      {},
      { 'Retry-After': RETRY_AFTER_OVERLOADED },
    );
  }
  if (isUnavailableError(err)) {
    // The process's OutageLog reports the outage once; one line per request would flood.
    log.debug({ fault: faultOf(err), requestId }, 'dependency unavailable');
    return new ApiError(
      'service_unavailable',
      'The service is temporarily unavailable; retry with backoff (writes with the same Idempotency-Key).',
      {},
      { 'Retry-After': RETRY_AFTER_UNAVAILABLE },
    );
  }
  if (err instanceof StoreUnavailable) {
    // The result store (RESULT_STORE=s3) does not answer: results cannot be read for now.
    log.warn({ err: err.message, requestId }, 'result store unavailable');
    return new ApiError(
      'service_unavailable',
      'Results are temporarily unavailable; retry with backoff.',
      {},
      { 'Retry-After': RETRY_AFTER_UNAVAILABLE },
    );
  }
  return null;
}

/** A fixed body for the one case where rendering the real error failed: still JSON, never HTML. */
const LAST_RESORT = JSON.stringify({ detail: { error: 'internal_error', message: 'Something went wrong on our side.' } });

export const notFound: RequestHandler = (req) => {
  throw new ApiError('not_found', `No route for ${req.method} ${req.path}.`);
};

/**
 * 405 method_not_allowed, with Allow, for a path the API serves under other methods. Paths it
 * does not serve at all go on to notFound.
 */
export function methodNotAllowed(routes: ReadonlyArray<{ method: string; path: string }>): RequestHandler {
  const byPath = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  for (const { method, path } of routes) {
    const entry = byPath.get(path) ?? { pattern: new RegExp(`^${path.replace(/:[^/]+/g, '[^/]+')}/?$`), methods: new Set<string>() };
    entry.methods.add(method.toUpperCase());
    byPath.set(path, entry);
  }
  return (req, _res, next) => {
    const allowed = new Set<string>();
    for (const { pattern, methods } of byPath.values()) if (pattern.test(req.path)) for (const m of methods) allowed.add(m);
    if (allowed.size === 0 || allowed.has(req.method)) {
      next();
      return;
    }
    throw new ApiError('method_not_allowed', `${req.method} is not allowed on ${req.path}.`, {}, { Allow: [...allowed].join(', ') });
  };
}

/**
 * The one renderer: service errors as {"detail": {"error": code, "message", ...context}},
 * validation failures as the HTTPValidationError body (422). Never HTML, never a stack, never
 * a server path: if rendering itself fails, a fixed JSON 500 goes out instead.
 */
export function renderErrors(log: Logger): ErrorRequestHandler {
  const render = renderError(log);
  return (err, req, res, next) => {
    try {
      render(err, req, res, next);
    } catch (failure) {
      log.error({ err: faultOf(failure), requestId: res.locals.requestId }, 'error rendering failed');
      if (res.headersSent) {
        req.socket.destroy();
        return;
      }
      res.statusCode = 500;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(LAST_RESORT);
    }
  };
}

function sendServiceError(res: Response, err: ApiError): void {
  for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  res.status(err.status).json({ detail: { error: err.code, message: err.message, ...err.fields } });
}

function renderError(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    if (err instanceof ApiError) {
      sendServiceError(res, err);
      return;
    }
    if (err instanceof RequestValidationError) {
      res.status(422).json({ detail: err.issues });
      return;
    }
    const e = err as ValidatorError & { type?: string; status?: number; statusCode?: number; name?: string };
    if (e.type === 'entity.parse.failed') {
      res.status(422).json({ detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
      return;
    }
    if (e.type === 'entity.too.large') {
      res.status(413).json({ detail: { error: 'invalid_request', message: `Request body too large: at most ${MAX_JSON_BYTES} bytes.` } });
      return;
    }
    if (e.type === 'entity.too.deep') {
      res.status(422).json({
        detail: [
          {
            loc: ['body'],
            msg: `JSON nesting is deeper than ${MAX_JSON_DEPTH} levels`,
            type: 'json_too_deep',
            ctx: { max_depth: MAX_JSON_DEPTH },
          },
        ],
      });
      return;
    }
    const status = e.status ?? e.statusCode;
    if (err instanceof URIError && status === 400) {
      // A path parameter that is not valid percent-encoding (the router cannot decode it).
      res
        .status(422)
        .json({ detail: [{ loc: ['path'], msg: 'Path parameter is not valid percent-encoding', type: 'value_error', input: req.path }] });
      return;
    }
    if (status === 404) {
      res.status(404).json({ detail: { error: 'not_found', message: `No route for ${req.method} ${req.path}.` } });
      return;
    }
    if (status === 415) {
      res.status(415).json({ detail: { error: 'invalid_request', message: 'Send the body as application/json.' } });
      return;
    }
    if (status === 400 && Array.isArray(e.errors)) {
      res.status(422).json({ detail: validatorIssues(e, req.body) });
      return;
    }
    const dependency = dependencyError(err, log, res.locals.requestId);
    if (dependency) {
      sendServiceError(res, dependency);
      return;
    }
    const requestId = res.locals.requestId as string;
    log.error({ err, requestId }, 'unhandled error');
    res.status(500).json({ detail: { error: 'internal_error', message: 'Something went wrong on our side.', request_id: requestId } });
  };
}
