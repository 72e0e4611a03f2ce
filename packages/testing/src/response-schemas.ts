import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type AnySchema, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import standaloneCode from 'ajv/dist/standalone';
import { CONTRACT_CACHE_DIR, contractDigest, loadOpenApiDocument, type OpenApiDocument } from '@sdx/contract';

/**
 * What the response validator reads of openapi.yaml: its operations with their documented
 * responses, and the compiled schemas of those responses.
 *
 * One ajv instance compiles the schemas over the document itself, so a component schema that
 * many responses reference is compiled once, and called. Compiling them all takes seconds, which
 * every test file (each with a module registry of its own) would pay again for the schemas it
 * uses; so they are compiled once per contract and kept as ajv standalone code, with the
 * operations, in a module beside the code (CONTRACT_CACHE_DIR, where the parsed contract is kept),
 * under a key made of the contract's digest, the versions of ajv and ajv-formats and
 * GENERATOR_VERSION. Each later process requires that module, and neither compiles nor reads
 * the document. A module that cannot be required or was not written for the key is compiled
 * again and replaced.
 */

/** Changes whenever what the generated module holds changes, so an older module is not read. */
export const GENERATOR_VERSION = 1;

/** The document's $id for ajv: the `#/...` references of its schemas resolve in it. */
const DOCUMENT_ID = 'sdx-contract';

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type Method = (typeof METHODS)[number];

/** Keywords whose value is data, not a schema: nothing below them is a `oneOf`. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'example', 'examples']);

/** An operation of the document, in document order. */
export interface DocumentedOperation {
  operationId: string;
  method: Method;
  /** Path template, e.g. `/v1/jobs/{job_id}/cancel`. */
  template: string;
  /**
   * Its responses by status key (`200`, `4XX`, `default`), each by documented media type: the
   * pointer of the type's schema when the type is JSON and has one, null otherwise.
   */
  responses: Record<string, Record<string, string | null>>;
}

/** A `oneOf` of the response schemas: where it is (`#/.../oneOf`) and how many branches it has. */
export interface OneOfLocation {
  pointer: string;
  branches: number;
}

export interface ResponseSchemas {
  operations: readonly DocumentedOperation[];
  /** The validator of the schema at `pointer`, a JSON pointer into the document (`#/paths/...`). */
  validator(pointer: string): ValidateFunction | undefined;
  /** Every `oneOf` of the response schemas; the validator of branch i is at `${pointer}/${i}`. */
  oneOfs(): readonly OneOfLocation[];
}

export function isJsonMediaType(mediaType: string): boolean {
  return mediaType === 'application/json' || /^application\/[^/]+\+json$/.test(mediaType);
}

function escapeSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The JSON pointer (`#/a/b`) of the given path of keys. */
function pointerOf(...segments: string[]): string {
  return `#/${segments.map(escapeSegment).join('/')}`;
}

/** The value at a JSON pointer (`#/a/b`, or an instance path `/a/b`), undefined when there is none. */
export function valueAt(root: unknown, pointer: string): unknown {
  const segments = pointer.replace(/^#/, '').split('/').slice(1);
  let node = root;
  for (const segment of segments) {
    if (node === null || typeof node !== 'object') return undefined;
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!Object.prototype.hasOwnProperty.call(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function isReference(value: unknown): value is { $ref: string } {
  return typeof value === 'object' && value !== null && typeof (value as { $ref?: unknown }).$ref === 'string';
}

/** The operations of the document, their response objects' `$ref`s followed. */
export function operationsOf(document: OpenApiDocument): DocumentedOperation[] {
  const operations: DocumentedOperation[] = [];
  for (const [template, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (item as Record<string, { operationId?: string; responses?: Record<string, unknown> } | undefined>)[method];
      if (!operation?.operationId) continue;
      const responses: DocumentedOperation['responses'] = {};
      for (const status of Object.keys(operation.responses ?? {})) {
        let at = pointerOf('paths', template, method, 'responses', status);
        let response = valueAt(document, at);
        for (let hops = 0; isReference(response) && hops < 16; hops++) {
          at = response.$ref;
          response = valueAt(document, at);
        }
        const content = (response as { content?: Record<string, { schema?: unknown }> } | undefined)?.content ?? {};
        responses[status] = Object.fromEntries(
          Object.entries(content).map(([mediaType, media]) => [
            mediaType,
            isJsonMediaType(mediaType) && media.schema !== undefined ? `${at}/${pointerOf('content', mediaType, 'schema').slice(2)}` : null,
          ]),
        );
      }
      operations.push({ operationId: operation.operationId, method, template, responses });
    }
  }
  return operations;
}

function schemaPointers(operations: readonly DocumentedOperation[]): string[] {
  const pointers = operations.flatMap((op) => Object.values(op.responses).flatMap((content) => Object.values(content)));
  return [...new Set(pointers.filter((pointer): pointer is string => pointer !== null))];
}

/** Calls `visit` on every schema object below `node` (at `pointer`), data (enum values, examples) left out. */
function walkSchema(node: unknown, pointer: string, visit: (schema: Record<string, unknown>, pointer: string) => void): void {
  if (Array.isArray(node)) {
    node.forEach((item, i) => walkSchema(item, `${pointer}/${i}`, visit));
    return;
  }
  if (node === null || typeof node !== 'object') return;
  visit(node as Record<string, unknown>, pointer);
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (!DATA_KEYWORDS.has(key) && !key.startsWith('x-')) walkSchema(value, `${pointer}/${escapeSegment(key)}`, visit);
  }
}

/** Every `oneOf` in the component schemas and in the response schemas outside them. */
function findOneOfs(document: OpenApiDocument, responsePointers: readonly string[]): OneOfLocation[] {
  const found: OneOfLocation[] = [];
  const visit = (schema: Record<string, unknown>, pointer: string) => {
    if (Array.isArray(schema.oneOf)) found.push({ pointer: `${pointer}/oneOf`, branches: schema.oneOf.length });
  };
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {}))
    walkSchema(schema, pointerOf('components', 'schemas', name), visit);
  for (const pointer of responsePointers) {
    if (!pointer.startsWith('#/components/schemas/')) walkSchema(valueAt(document, pointer), pointer, visit);
  }
  return found;
}

/** The pointer of the schema a schema made of a `$ref` alone stands for, or the pointer itself. */
function canonicalPointer(document: OpenApiDocument, pointer: string): string {
  let at = pointer;
  for (let hops = 0; hops < 16; hops++) {
    const schema = valueAt(document, at);
    if (!isReference(schema) || Object.keys(schema).length !== 1 || !schema.$ref.startsWith('#/')) return at;
    at = schema.$ref;
  }
  return at;
}

/**
 * An ajv instance over the document, with the options the response validator has always had
 * (openapi-backend's): every error reported (allErrors), ajv-formats' formats (`date-time`,
 * `date`, `uri`, ..., and OpenAPI's `int32`, `int64`, `byte`, ...), unknown keywords (`example`,
 * `x-*`, `discriminator`) ignored (strict: false); OpenAPI 3.0's `nullable: true` is ajv's own.
 * Each schema is checked against JSON Schema first, as ajv.compile does. A `$ref` is always a
 * call (inlineRefs: false): a component is compiled once however many schemas reference it.
 */
function ajvOverDocument(document: OpenApiDocument, responsePointers: readonly string[], source: boolean): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, inlineRefs: false, ...(source ? { code: { source: true } } : {}) });
  addFormats(ajv);
  const schemas: Array<[string, unknown]> = [
    ...Object.entries(document.components?.schemas ?? {}).map(([name, schema]): [string, unknown] => [
      pointerOf('components', 'schemas', name),
      schema,
    ]),
    ...responsePointers.map((pointer): [string, unknown] => [pointer, valueAt(document, pointer)]),
  ];
  for (const [pointer, schema] of schemas) {
    if (!ajv.validateSchema(schema as AnySchema)) throw new Error(`${pointer} is not a valid schema: ${ajv.errorsText(ajv.errors)}`);
  }
  ajv.addSchema({ ...document, $id: DOCUMENT_ID }, undefined, undefined, false);
  // ajv compiles a schema again for every way it is reached (a response's own $ref, another
  // schema's $ref); registered under its pointer, a component is compiled once, and shared.
  // That holds when the components reference whole components only, as openapi.yaml's do.
  const components = document.components?.schemas ?? {};
  const componentRef = /^#\/components\/schemas\/([A-Za-z0-9_.-]+)$/;
  let wholeComponents = Object.keys(components).every((name) => componentRef.test(`#/components/schemas/${name}`));
  for (const [name, schema] of Object.entries(components)) {
    walkSchema(schema, pointerOf('components', 'schemas', name), (node) => {
      if ('$ref' in node) wholeComponents &&= typeof node.$ref === 'string' && (componentRef.exec(node.$ref)?.[1] ?? '') in components;
    });
  }
  if (wholeComponents) {
    for (const [name, schema] of Object.entries(components)) {
      ajv.addSchema(schema, `${DOCUMENT_ID}#/components/schemas/${name}`, undefined, false);
    }
  }
  return ajv;
}

/** Compiles in this process, each schema on first use: for a document other than the contract. */
export function compileResponseSchemas(document: OpenApiDocument): ResponseSchemas {
  const operations = operationsOf(document);
  const pointers = schemaPointers(operations);
  const ajv = ajvOverDocument(document, pointers, false);
  let oneOfs: OneOfLocation[] | undefined;
  return {
    operations,
    validator: (pointer) => ajv.getSchema(`${DOCUMENT_ID}${canonicalPointer(document, pointer)}`),
    oneOfs: () => (oneOfs ??= findOneOfs(document, pointers)),
  };
}

function packageVersion(name: string): string {
  return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
}

/** The key of the compiled module of a contract: its digest, ajv's, ajv-formats' and the generator's versions. */
export function responseSchemasKey(digest: string): string {
  return createHash('sha256')
    .update(`${digest}\0ajv ${packageVersion('ajv')}\0ajv-formats ${packageVersion('ajv-formats')}\0${GENERATOR_VERSION}`)
    .digest('hex')
    .slice(0, 32);
}

interface CompiledModule {
  cacheKey: string;
  operations: DocumentedOperation[];
  oneOfs: OneOfLocation[];
  validators: Record<string, ValidateFunction | undefined>;
}

/**
 * The module compiled for `key` in `file`, required as any module (each test file has a module
 * registry of its own). Jest remembers, for the life of a worker, that a path it looked up was
 * absent, and would not see the module written after that: a path is only required once it exists.
 */
function requireCompiled(file: string, key: string): CompiledModule | undefined {
  if (!existsSync(file)) return undefined;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a module generated at run time, its path computed
    const loaded = require(file) as Partial<CompiledModule> | undefined;
    if (loaded?.cacheKey === key && Array.isArray(loaded.operations) && Array.isArray(loaded.oneOfs) && loaded.validators) {
      return loaded as CompiledModule;
    }
  } catch {
    // Cut short or not JavaScript: compiled again.
  }
  return undefined;
}

export interface CachedResponseSchemas extends ResponseSchemas {
  /** The module's path, and whether this process required it or compiled (and wrote) it. */
  file: string;
  origin: 'cache' | 'compiled';
}

/**
 * The response schemas of the document whose digest is `digest`, required from `cacheDir` when
 * a module was compiled there for the same key, compiled (all at once) and written there
 * otherwise; `document` is only read then. Written to a file of its own first and renamed, so a
 * process never requires a module another is still writing; processes compiling at once each
 * write a whole module.
 */
export function cachedResponseSchemas(document: () => OpenApiDocument, digest: string, cacheDir: string): CachedResponseSchemas {
  const key = responseSchemasKey(digest);
  const file = path.join(cacheDir, `response-validators-${key}.js`);
  const loaded = requireCompiled(file, key);
  if (loaded) {
    const { operations, oneOfs, validators } = loaded;
    return {
      file,
      origin: 'cache',
      operations,
      validator: (pointer) => (Object.prototype.hasOwnProperty.call(validators, pointer) ? validators[pointer] : undefined),
      oneOfs: () => oneOfs,
    };
  }

  const definition = document();
  const operations = operationsOf(definition);
  const pointers = schemaPointers(operations);
  const oneOfs = findOneOfs(definition, pointers);
  const ajv = ajvOverDocument(definition, pointers, true);
  const exported = [
    ...pointers,
    ...oneOfs.flatMap(({ pointer, branches }) => Array.from({ length: branches }, (_, i) => `${pointer}/${i}`)),
  ];
  const compiled = [...new Set(exported.map((pointer) => canonicalPointer(definition, pointer)))];
  const exportOf = (pointer: string) => `exports.v${compiled.indexOf(canonicalPointer(definition, pointer))}`;
  // Each schema's function is exported once (v0, v1, ...), and the functions gathered by pointer in
  // `validators`; ajv-formats has the module require its formats ("ajv-formats/dist/formats").
  const code = [
    standaloneCode(ajv, Object.fromEntries(compiled.map((pointer, i) => [`v${i}`, `${DOCUMENT_ID}${pointer}`]))),
    `exports.validators = {${exported.map((pointer) => `${JSON.stringify(pointer)}: ${exportOf(pointer)}`).join(', ')}};`,
    `exports.operations = ${JSON.stringify(operations)};`,
    `exports.oneOfs = ${JSON.stringify(oneOfs)};`,
    // Last: a module cut short has no key.
    `exports.cacheKey = ${JSON.stringify(key)};`,
    '',
  ].join('\n');
  const partial = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(partial, code);
    renameSync(partial, file);
  } catch {
    // A read-only installation: every process compiles.
    rmSync(partial, { force: true });
  }
  return {
    file,
    origin: 'compiled',
    operations,
    validator: (pointer) => ajv.getSchema(`${DOCUMENT_ID}${canonicalPointer(definition, pointer)}`),
    oneOfs: () => oneOfs,
  };
}

let contract: CachedResponseSchemas | undefined;

/** The response schemas of openapi.yaml: from CONTRACT_CACHE_DIR when compiled before; once per module registry. */
export function contractResponseSchemas(): ResponseSchemas {
  contract ??= cachedResponseSchemas(loadOpenApiDocument, contractDigest(), CONTRACT_CACHE_DIR);
  return contract;
}
