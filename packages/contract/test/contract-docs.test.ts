import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { dereferenceSync } from 'dereference-json-schema';
import { loadOpenApiDocument } from '../src';
import type { LooseJson } from '@sdx/testing';

/**
 * What makes openapi.yaml a contract clients can be generated from and read: every property
 * described, every date-time field formatted, every operation with a request example (when it
 * takes a body) and an example of its success response, and every example valid against its
 * schema. It walks the whole document, so whatever is added later is held to the same rules.
 */

type Node = Record<string, LooseJson>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];
const document = loadOpenApiDocument() as unknown as Node;

/** Follows local $refs (`#/components/...`) to the node they name. */
function resolve(node: Node | undefined): Node | undefined {
  let current = node;
  for (let i = 0; current && typeof current.$ref === 'string' && i < 20; i += 1) {
    current = current.$ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((n: Node | undefined, key) => n?.[key], document);
  }
  return current;
}

/** Every schema object of the document with a readable location, $refs not followed (each schema is visited where it is defined). */
function schemasOf(): Array<[string, Node]> {
  const found: Array<[string, Node]> = [];
  const visit = (schema: unknown, where: string) => {
    if (!schema || typeof schema !== 'object') return;
    const s = schema as Node;
    if (typeof s.$ref === 'string') return;
    found.push([where, s]);
    for (const [key, value] of Object.entries((s.properties ?? {}) as Node)) visit(value, `${where}.${key}`);
    if (s.items) visit(s.items, `${where}[]`);
    if (s.additionalProperties && typeof s.additionalProperties === 'object') visit(s.additionalProperties, `${where}{}`);
    for (const combiner of ['oneOf', 'anyOf', 'allOf'])
      (s[combiner] ?? []).forEach((sub: unknown, i: number) => visit(sub, `${where}/${combiner}[${i}]`));
  };
  const media = (content: Node | undefined, where: string) => {
    for (const [type, m] of Object.entries(content ?? {})) visit((m as Node).schema, `${where} ${type}`);
  };
  const components = document.components ?? {};
  for (const [name, schema] of Object.entries((components.schemas ?? {}) as Node)) visit(schema, name);
  for (const [name, body] of Object.entries((components.requestBodies ?? {}) as Node)) media(body.content, `requestBodies.${name}`);
  for (const [name, response] of Object.entries((components.responses ?? {}) as Node)) media(response.content, `responses.${name}`);
  for (const [name, parameter] of Object.entries((components.parameters ?? {}) as Node)) visit(parameter.schema, `parameters.${name}`);
  for (const [path, item] of Object.entries(document.paths as Node)) {
    for (const method of METHODS) {
      const operation = item[method] as Node | undefined;
      if (!operation) continue;
      const where = `${method.toUpperCase()} ${path}`;
      for (const parameter of operation.parameters ?? []) if (!parameter.$ref) visit(parameter.schema, `${where} ${parameter.name}`);
      if (operation.requestBody && !operation.requestBody.$ref) media(operation.requestBody.content, `${where} body`);
      for (const [status, response] of Object.entries((operation.responses ?? {}) as Node)) {
        if (!response.$ref) media(response.content, `${where} ${status}`);
      }
    }
  }
  return found;
}

interface Operation {
  label: string;
  path: string;
  method: string;
  node: Node;
}

function operations(): Operation[] {
  return Object.entries(document.paths as Node).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({
      label: `${item[method].operationId} (${method.toUpperCase()} ${path})`,
      path,
      method,
      node: item[method] as Node,
    })),
  );
}

/** The examples of a media type object: `example`, or each of `examples` (resolved). */
function examplesOf(media: Node): unknown[] {
  if ('example' in media) return [media.example];
  return Object.values((media.examples ?? {}) as Node).map((e) => resolve(e as Node)?.value);
}

/** The documented success response with a body: the lowest 2xx status that has content. */
function successOf(operation: Node): [string, Node] | undefined {
  const statuses = Object.keys(operation.responses ?? {})
    .filter((s) => /^2\d\d$/.test(s))
    .sort();
  for (const status of statuses) {
    const response = resolve(operation.responses[status])!;
    if (response.content && Object.keys(response.content).length > 0) return [status, response];
  }
  return undefined;
}

/** Media types whose bodies are bytes (a spreadsheet): an example cannot be written in YAML. */
const isBinary = (media: Node) => resolve(media.schema)?.format === 'binary';

describe('openapi.yaml reads well and generates good clients', () => {
  const schemas = schemasOf();

  it('describes every property', () => {
    const missing = schemas.flatMap(([where, schema]) =>
      Object.entries((schema.properties ?? {}) as Node)
        .filter(([, property]) => !property.description && !resolve(property)?.description)
        .map(([key]) => `${where}.${key}`),
    );
    expect(missing).toEqual([]);
  });

  it('gives every date-time field its format', () => {
    const unformatted = schemas.flatMap(([where, schema]) =>
      Object.entries((schema.properties ?? {}) as Node)
        .filter(([key]) => /_at$|^at_/.test(key))
        .filter(([, property]) => !['date-time', 'date'].includes(resolve(property)?.format))
        .map(([key]) => `${where}.${key}`),
    );
    expect(unformatted).toEqual([]);
  });

  it('has a request example on every operation that takes a body', () => {
    const missing = operations()
      .filter(({ node }) => node.requestBody)
      .filter(({ node }) => {
        const content = resolve(node.requestBody)!.content as Node;
        return Object.values(content).some((media) => examplesOf(media as Node).length === 0);
      })
      .map(({ label }) => label);
    expect(missing).toEqual([]);
  });

  it('has an example of the success response of every operation', () => {
    const missing = operations().flatMap(({ label, node }) => {
      const success = successOf(node);
      if (!success) return [];
      return Object.entries(success[1].content as Node)
        .filter(([, media]) => !isBinary(media as Node) && examplesOf(media as Node).length === 0)
        .map(([type]) => `${label} ${success[0]} ${type}`);
    });
    expect(missing).toEqual([]);
  });

  // ajv knows OpenAPI's `nullable`; `discriminator` is only a hint for clients here (oneOf decides).
  const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
  const dereferenced = dereferenceSync(document) as unknown as Node;
  const compiled = new WeakMap<object, ReturnType<typeof ajv.compile>>();
  /** Problems of each example of each media type of `content` against its schema, as `where: errors`. */
  function exampleProblems(content: Node | undefined, where: string): string[] {
    return Object.entries(content ?? {}).flatMap(([type, media]) => {
      const schema = (media as Node).schema as object | undefined;
      if (!schema) return [];
      const validate = compiled.get(schema) ?? ajv.compile(schema);
      compiled.set(schema, validate);
      return examplesOf(media as Node)
        .filter((example) => !validate(example))
        .map(() => `${where} ${type}: ${ajv.errorsText(validate.errors)}`);
    });
  }

  it('keeps every request example valid against its schema', () => {
    const problems = operations().flatMap(({ label, path, method }) =>
      exampleProblems(dereferenced.paths[path][method].requestBody?.content, label),
    );
    expect(problems).toEqual([]);
  });

  it('keeps every response example valid against its schema', () => {
    const problems = operations().flatMap(({ label, path, method }) =>
      Object.entries((dereferenced.paths[path][method].responses ?? {}) as Node).flatMap(([status, response]) =>
        exampleProblems(response.content, `${label} ${status}`),
      ),
    );
    expect(problems).toEqual([]);
  });
});
