import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { type Json, type JsonObject, type StripeSubset } from './extract';

/**
 * The operations of spec/stripe-subset.json, and the checks of a request's parameters against
 * them, made as Stripe makes them: a form body decoded with bracket notation, its strings coerced
 * to the schema's types, and every object closed — Stripe refuses a parameter it does not know at
 * any depth, although its description writes `additionalProperties: false` only at the top.
 */
const SUBSET_FILE = path.join(__dirname, '../spec/stripe-subset.json');

let loaded: StripeSubset | undefined;
export function stripeSubset(): StripeSubset {
  loaded ??= JSON.parse(readFileSync(SUBSET_FILE, 'utf8')) as StripeSubset;
  return loaded;
}

export interface Operation {
  method: 'GET' | 'POST';
  template: string;
  operationId: string;
  pattern: RegExp;
  pathParams: string[];
  validate: ValidateFunction;
}

export interface ParamProblem {
  param: string;
  message: string;
  code?: string;
}

/** Every object schema with properties but no word on others is closed, as Stripe's parser is. */
function closeObjects(node: Json): Json {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, closeObjects(schema)]));
    } else out[key] = closeObjects(value);
  }
  if ('properties' in out && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

const requestAjv = new Ajv({ strict: false, coerceTypes: true, validateFormats: false, verbose: true, logger: false });

function paramsSchema(method: 'GET' | 'POST', operation: JsonObject): JsonObject {
  if (method === 'POST') {
    const body = operation.requestBody as JsonObject | undefined;
    const content = body?.content as Record<string, JsonObject> | undefined;
    const schema = content?.['application/x-www-form-urlencoded']?.schema as JsonObject | undefined;
    return closeObjects(schema ?? { type: 'object', properties: {}, additionalProperties: false }) as JsonObject;
  }
  const properties: JsonObject = {};
  for (const parameter of (operation.parameters ?? []) as JsonObject[]) {
    if (parameter.in === 'query') properties[parameter.name as string] = closeObjects(parameter.schema ?? {});
  }
  return { type: 'object', properties, additionalProperties: false };
}

let operations: Operation[] | undefined;
export function stripeOperations(): Operation[] {
  operations ??= Object.entries(stripeSubset().paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => {
      const upper = method.toUpperCase() as 'GET' | 'POST';
      const pathParams: string[] = [];
      const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_m, name: string) => {
        pathParams.push(name);
        return '([^/]+)';
      });
      return {
        method: upper,
        template,
        operationId: operation.operationId as string,
        pattern: new RegExp(`^${source}$`),
        pathParams,
        validate: requestAjv.compile(paramsSchema(upper, operation)),
      };
    }),
  );
  return operations;
}

export function findOperation(method: string, pathname: string): { operation: Operation; pathParams: Record<string, string> } | null {
  for (const operation of stripeOperations()) {
    if (operation.method !== method) continue;
    const match = operation.pattern.exec(pathname);
    if (!match) continue;
    const pathParams = Object.fromEntries(operation.pathParams.map((name, i) => [name, decodeURIComponent(match[i + 1])]));
    return { operation, pathParams };
  }
  return null;
}

function bracketed(segments: string[]): string {
  return segments.map((s, i) => (i === 0 ? s : `[${s}]`)).join('');
}

function segmentsOf(error: ErrorObject): string[] {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'additionalProperties') segments.push(String(error.params.additionalProperty));
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  return segments;
}

const onlyEmpty = (error: ErrorObject) => error.keyword === 'enum' && (error.params.allowedValues as unknown[]).every((v) => v === '');
function rank(error: ErrorObject): number {
  if (error.keyword === 'additionalProperties') return 0;
  if (error.keyword === 'required') return 1;
  if (error.keyword === 'enum' && !onlyEmpty(error)) return 2;
  if (error.keyword === 'type') return 3;
  if (error.keyword === 'anyOf') return 9;
  return 4;
}

function oneOf(values: unknown[]): string {
  const shown = values.map(String);
  return shown.length <= 1 ? shown.join('') : `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}`;
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The problem Stripe would name first, in its words, from ajv's errors. */
export function paramProblem(errors: ErrorObject[]): ParamProblem {
  const [error] = [...errors].sort((a, b) => segmentsOf(b).length - segmentsOf(a).length || rank(a) - rank(b));
  const segments = segmentsOf(error);
  const param = bracketed(segments);
  switch (error.keyword) {
    case 'additionalProperties':
      return { param, message: `Received unknown parameter: ${param}`, code: 'parameter_unknown' };
    case 'required':
      return { param, message: `Missing required param: ${param}.`, code: 'parameter_missing' };
    case 'enum':
      return { param, message: `Invalid ${param}: must be one of ${oneOf(error.params.allowedValues as unknown[])}` };
    case 'type': {
      const type = String(error.params.type);
      if (type === 'integer' || type === 'number')
        return { param, message: `Invalid integer: ${show(error.data)}`, code: 'parameter_invalid_integer' };
      if (type === 'object' || type === 'array') return { param, message: `Invalid ${type}` };
      return { param, message: `Invalid ${type}: ${show(error.data)}` };
    }
    case 'maxLength':
      return { param, message: `Invalid ${param}: must be at most ${String(error.params.limit)} characters` };
    default:
      return { param, message: `Invalid ${param || 'request'}: ${error.message ?? 'invalid value'}` };
  }
}

/** Checks (and coerces in place) a request's decoded parameters; null when they pass. */
export function checkParams(operation: Operation, params: Record<string, unknown>): ParamProblem | null {
  if (operation.validate(params)) return null;
  return paramProblem(operation.validate.errors ?? []);
}

/** OpenAPI 3.0's `nullable` as JSON Schema: ajv takes it only beside a `type` and outside `enum`. */
function nullableToJsonSchema(node: Json): Json {
  if (Array.isArray(node)) return node.map(nullableToJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, nullableToJsonSchema(schema)]));
    } else if (key !== 'nullable') out[key] = nullableToJsonSchema(value);
  }
  return node.nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

let responseAjv: Ajv | undefined;
/**
 * Where `object` departs from the component schema `name` of Stripe's description (empty when
 * it conforms): how tests hold the fake's objects to Stripe's shapes.
 */
export function objectProblems(name: string, object: unknown): string[] {
  if (!responseAjv) {
    responseAjv = new Ajv({ strict: false, validateFormats: false, allErrors: true, logger: false });
    responseAjv.addSchema({
      $id: 'stripe',
      components: { schemas: nullableToJsonSchema(stripeSubset().components.schemas) },
    });
  }
  const validate = responseAjv.getSchema(`stripe#/components/schemas/${name}`);
  if (!validate) throw new Error(`no component schema ${name}`);
  if (validate(object)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}
