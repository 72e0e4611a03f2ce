import path from 'node:path';
import { loadOpenApiDocument } from '@sdx/contract';
import { requestsOnly, skipUnusedSpecValidator } from '../src/middleware/validator-start';

/**
 * The request validator's start kept to what the API uses (validator-start.ts): the contract it
 * is given still names every schema a request reaches, and the OpenAPI meta-schema is compiled
 * only where it is used.
 */

/** Every component schema a string of the document names (`$ref`s, discriminator mappings). */
function named(node: unknown, into = new Set<string>()): Set<string> {
  if (typeof node === 'string') {
    if (node.startsWith('#/components/schemas/')) into.add(node.slice('#/components/schemas/'.length).split('/')[0]);
  } else if (node && typeof node === 'object') for (const value of Object.values(node)) named(value, into);
  return into;
}

describe('requestsOnly', () => {
  const whole = loadOpenApiDocument();
  const pruned = requestsOnly(loadOpenApiDocument());
  const kept = Object.keys(pruned.components?.schemas ?? {});

  it('leaves no reference dangling: every schema the pruned document names is in it', () => {
    const missing = [...named(pruned)].filter((name) => !kept.includes(name));
    expect(missing).toEqual([]);
  });

  it('keeps every schema of a request body or parameter, and drops those of responses only', () => {
    const requests: unknown[] = [];
    for (const item of Object.values(whole.paths)) {
      for (const operation of Object.values(item ?? {})) {
        if (!operation || typeof operation !== 'object' || !('responses' in operation)) continue;
        requests.push(operation.parameters, operation.requestBody);
      }
      requests.push(item?.parameters);
    }
    const reached = named([requests, whole.components?.parameters, whole.components?.requestBodies]);
    expect([...reached].filter((name) => !kept.includes(name))).toEqual([]);
    // Schemas of responses and events only are gone, and each operation answers a bare default.
    for (const name of ['JobResponse', 'JobResult', 'ServiceError', 'WebhookEvent']) {
      expect(Object.keys(whole.components?.schemas ?? {})).toContain(name);
      expect(kept).not.toContain(name);
    }
    expect(pruned.paths['/v1/jobs']?.post?.responses).toEqual({ default: { description: 'See openapi.yaml.' } });
    expect(kept.length).toBeLessThan(Object.keys(whole.components?.schemas ?? {}).length);
  });
});

describe('skipUnusedSpecValidator', () => {
  type Validator = new (options: { version: string; validateApiSpec: boolean }) => { validate(document: unknown): { errors: unknown[] } };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const framework = require(
    path.join(path.dirname(require.resolve('express-openapi-validator')), 'framework', 'openapi.schema.validator.js'),
  ) as { OpenAPISchemaValidator: Validator };

  it('still checks a document when asked to', () => {
    skipUnusedSpecValidator();
    skipUnusedSpecValidator();
    const checking = new framework.OpenAPISchemaValidator({ version: '3.0.3', validateApiSpec: true });
    expect(checking.validate({ openapi: '3.0.3' }).errors.length).toBeGreaterThan(0);
    expect(checking.validate(loadOpenApiDocument()).errors).toEqual([]);
    // Without the option, the framework's check answers no error (it is never asked).
    const idle = new framework.OpenAPISchemaValidator({ version: '3.0.3', validateApiSpec: false });
    expect(idle.validate({ openapi: '3.0.3' }).errors).toEqual([]);
  });
});
