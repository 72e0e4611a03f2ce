import { loadOpenApiDocument } from '@sdx/contract';
import type { OperationId } from '../routes/route';

/**
 * The JSON Schemas of the MCP tools, taken from openapi.yaml rather than described again: a
 * tool's input is made of the request body fields and the path and query parameters of the
 * REST operation it stands for, its output of the components.schemas the REST operation
 * answers with. OpenAPI 3.0's dialect is said as JSON Schema (draft-07) on the way: `$ref`s
 * inlined, `nullable` as a `null` alternative, examples and `x-` extensions left out.
 */

export type JsonSchema = Record<string, unknown>;

const document = loadOpenApiDocument() as unknown as {
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
};

function resolve(ref: string): unknown {
  let node: unknown = document;
  for (const key of ref.replace(/^#\//, '').split('/')) node = (node as Record<string, unknown> | undefined)?.[key];
  if (node === undefined) throw new Error(`openapi.yaml has no ${ref}`);
  return node;
}

/** Keywords of OpenAPI that JSON Schema does not have, or that only document the contract. */
const LEFT_OUT = new Set(['example', 'examples', 'nullable', 'discriminator', 'xml', 'externalDocs', 'deprecated']);

/** An OpenAPI 3.0 schema as JSON Schema: references inlined, `nullable` as an anyOf with `{type: 'null'}`. */
export function jsonSchemaOf(node: unknown): JsonSchema {
  if (!node || typeof node !== 'object' || Array.isArray(node)) throw new Error('not a schema');
  const schema = node as Record<string, unknown>;
  if (typeof schema.$ref === 'string') return jsonSchemaOf(resolve(schema.$ref));
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (LEFT_OUT.has(key) || key.startsWith('x-')) continue;
    if (key === 'properties')
      out[key] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, sub]) => [name, jsonSchemaOf(sub)]));
    else if (key === 'items' || (key === 'additionalProperties' && typeof value === 'object')) out[key] = jsonSchemaOf(value);
    else if (key === 'anyOf' || key === 'oneOf' || key === 'allOf') out[key] = (value as unknown[]).map(jsonSchemaOf);
    else out[key] = value;
  }
  if (schema.nullable !== true) return out;
  const { description, ...rest } = out;
  return { ...(description !== undefined ? { description } : {}), anyOf: [rest, { type: 'null' }] };
}

/** A schema of components.schemas, as JSON Schema. */
export function componentSchema(name: string): JsonSchema {
  return jsonSchemaOf({ $ref: `#/components/schemas/${name}` });
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: unknown;
}

function operationOf(operationId: OperationId): { parameters: Parameter[]; body: JsonSchema | null } {
  for (const item of Object.values(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const op = operation as { operationId?: string; parameters?: unknown[]; requestBody?: unknown } | undefined;
      if (method === 'parameters' || op?.operationId !== operationId) continue;
      const parameters = [...((item.parameters as unknown[] | undefined) ?? []), ...(op.parameters ?? [])].map((p) =>
        typeof (p as { $ref?: unknown }).$ref === 'string' ? (resolve((p as { $ref: string }).$ref) as Parameter) : (p as Parameter),
      );
      const requestBody =
        op.requestBody && typeof (op.requestBody as { $ref?: unknown }).$ref === 'string'
          ? resolve((op.requestBody as { $ref: string }).$ref)
          : op.requestBody;
      const media = (requestBody as { content?: Record<string, { schema?: unknown }> } | undefined)?.content?.['application/json'];
      return { parameters, body: media?.schema ? jsonSchemaOf(media.schema) : null };
    }
  }
  throw new Error(`openapi.yaml has no operation ${String(operationId)}`);
}

export interface ToolInputOptions {
  /** The fields the tool takes, in this order: request body fields, path or query parameters (by name). */
  fields: readonly string[];
  /** Constraints the tool adds to a field of the contract (an agent's argument has no URL to bound it, so an ID gets its length). */
  narrow?: Record<string, JsonSchema>;
  /** Fields of the tool alone (a cursor over a list the REST route answers whole), said here. */
  own?: Record<string, JsonSchema>;
  /** Required fields beyond those the contract requires (path parameters are required). */
  required?: readonly string[];
}

/**
 * The input schema of a tool standing for `route` (its operation of openapi.yaml): an object of exactly `fields` (no other
 * key), each with the contract's schema and description (a path or query parameter's own
 * description beside its schema's), required as the contract requires it.
 */
export function toolInput(route: { operationId: OperationId }, options: ToolInputOptions): JsonSchema {
  const { operationId } = route;
  const { parameters, body } = operationOf(operationId);
  const bodyProperties = (body?.properties ?? {}) as Record<string, JsonSchema>;
  const bodyRequired = new Set((body?.required as string[] | undefined) ?? []);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of options.fields) {
    const own = options.own?.[field];
    const parameter = parameters.find((p) => p.name === field && (p.in === 'path' || p.in === 'query'));
    let schema: JsonSchema;
    if (own) schema = own;
    else if (bodyProperties[field]) schema = bodyProperties[field];
    else if (parameter?.schema)
      schema = { ...jsonSchemaOf(parameter.schema), ...(parameter.description ? { description: parameter.description.trim() } : {}) };
    else throw new Error(`${String(operationId)} has no field ${field} in openapi.yaml`);
    const { default: fallback, ...rest } = { ...schema, ...options.narrow?.[field] };
    // A field the tool requires has no default to fall back on.
    properties[field] = options.required?.includes(field) || fallback === undefined ? rest : { ...rest, default: fallback };
    if (bodyRequired.has(field) || parameter?.required || options.required?.includes(field)) required.push(field);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

/** `schema` without the properties named (and not requiring them). */
export function withoutProperties(schema: JsonSchema, names: readonly string[]): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries((schema.properties ?? {}) as Record<string, unknown>).filter(([name]) => !names.includes(name)),
  );
  const required = ((schema.required as string[] | undefined) ?? []).filter((name) => !names.includes(name));
  return { ...schema, properties, required };
}
