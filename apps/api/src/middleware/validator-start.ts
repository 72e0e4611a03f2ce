/**
 * What express-openapi-validator (5.6) does when an app is built, kept to what the API uses. Each
 * API process, and each test file that builds an app, pays its start: a CPU profile of a minimal
 * test file put about 2 s of its 12 s in it on a loaded machine (docs/performance-history.md).
 */
import path from 'node:path';
import type { OpenApiDocument } from '@sdx/contract';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const SCHEMA_REF = '#/components/schemas/';

/**
 * The contract as the request validator needs it: each operation answers a bare `default` (it
 * validates no response); the shared responses, headers and examples and the webhooks' events
 * are left out, and so are the component schemas that nothing left names (requests' parameters
 * and bodies), directly or through other schemas. The validator walks and compiles every
 * component schema it is given, and more than half of openapi.yaml's describe responses and
 * events only. `document` is changed in place and returned (the validator rewrites the document
 * it is given, so it gets a copy of its own).
 */
export function requestsOnly(document: OpenApiDocument): OpenApiDocument {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (operation) operation.responses = { default: { description: 'See openapi.yaml.' } };
    }
  }
  // What only responses and events use: the shared responses, headers and examples, and the
  // webhooks' events (x-webhooks), which no request to this API carries.
  const { components } = document;
  if (!components?.schemas) return document;
  delete components.responses;
  delete components.headers;
  delete components.examples;
  delete (document as { 'x-webhooks'?: unknown })['x-webhooks'];
  const { schemas } = components;
  const kept = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const value of node) visit(value);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const value of Object.values(node)) {
      // A `$ref`, or a discriminator's mapping, naming a component schema.
      if (typeof value === 'string' && value.startsWith(SCHEMA_REF)) {
        const name = decodeURIComponent(value.slice(SCHEMA_REF.length).split('/')[0]).replace(/~1/g, '/').replace(/~0/g, '~');
        if (!kept.has(name) && name in schemas) {
          kept.add(name);
          visit(schemas[name]);
        }
      } else visit(value);
    }
  };
  // Everything but the schemas themselves: the paths and the rest of the components (parameters,
  // request bodies), which the validator's reference parser reads as well.
  const { schemas: _schemas, ...others } = components;
  const { components: _components, ...rest } = document;
  visit(rest);
  visit(others);
  components.schemas = Object.fromEntries(Object.entries(schemas).filter(([name]) => kept.has(name)));
  return document;
}

let installed = false;

/**
 * The validator builds an ajv validator of the OpenAPI 3 meta-schema on every start, also with
 * `validateApiSpec: false`, when it never calls it (about 300 ms of CPU per start). With that
 * option the validator's framework gets one that compiles nothing; with the option on (the
 * API never sets it) the validator's own is built as before. Idempotent.
 */
export function skipUnusedSpecValidator(): void {
  if (installed) return;
  installed = true;
  const validatorMain = require.resolve('express-openapi-validator');
  // The module instance the validator's framework reads the class from at each start (its
  // compiled code reads the export's property when it constructs one). The module system's own
  // require: under a test runner with a registry of its own, that is the instance the
  // validator got too.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const module = require(path.join(path.dirname(validatorMain), 'framework', 'openapi.schema.validator.js')) as {
    OpenAPISchemaValidator: new (options: { version: string; validateApiSpec: boolean }) => {
      validate(document: unknown): { errors: unknown[] };
    };
  };
  const Original = module.OpenAPISchemaValidator;
  class SpecValidator {
    private readonly inner?: InstanceType<typeof Original>;
    constructor(options: { version: string; validateApiSpec: boolean }) {
      if (options.validateApiSpec) this.inner = new Original(options);
    }
    validate(document: unknown): { errors: unknown[] } {
      return this.inner ? this.inner.validate(document) : { errors: [] };
    }
  }
  module.OpenAPISchemaValidator = SpecValidator;
}
