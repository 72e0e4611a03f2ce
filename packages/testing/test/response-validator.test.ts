import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CONTRACT_CACHE_DIR, contractDigest, loadOpenApiDocument, type OpenApiDocument } from '@sdx/contract';
import { cachedResponseSchemas, responseSchemasKey, valueAt } from '../src/response-schemas';
import { createResponseValidator, ResponseContractError, type ResponseValidator } from '../src/response-validator';

/**
 * The response validator checks what it always did, with schemas compiled once per contract and
 * required from a module beside the code (response-schemas.ts); a module that is broken or
 * was written for another contract is not used.
 */

function problemsOf(validator: ResponseValidator, method: string, url: string, status: number, body: unknown, contentType?: string) {
  try {
    validator.validate(method, url, status, body, contentType);
  } catch (error) {
    expect(error).toBeInstanceOf(ResponseContractError);
    return (error as ResponseContractError).problems;
  }
  throw new Error(`expected ${method} ${url} ${status} to be rejected`);
}

/** A small contract: items told apart by `kind`, each with an author held by a schema of its own that references another. */
function smallDocument(titleType = 'string'): OpenApiDocument {
  return {
    openapi: '3.0.3',
    info: { title: 'small', version: '1' },
    paths: {
      '/things/{id}': {
        get: {
          operationId: 'getThing',
          responses: {
            '200': { description: 'A page', content: { 'application/json': { schema: { $ref: '#/components/schemas/Page' } } } },
            '404': { $ref: '#/components/responses/NotFound' },
          },
        },
      },
    },
    components: {
      responses: {
        NotFound: { description: 'Not found', content: { 'application/json': { schema: { type: 'object', required: ['error'] } } } },
      },
      schemas: {
        Page: {
          type: 'object',
          additionalProperties: false,
          required: ['items', 'next'],
          properties: {
            items: { type: 'array', items: { $ref: '#/components/schemas/Item' } },
            next: { type: 'string', format: 'date-time', nullable: true },
          },
        },
        Item: {
          oneOf: [{ $ref: '#/components/schemas/Post' }, { $ref: '#/components/schemas/Comment' }],
          discriminator: { propertyName: 'kind' },
        },
        Post: {
          type: 'object',
          additionalProperties: false,
          required: ['kind', 'title', 'author'],
          properties: {
            kind: { type: 'string', enum: ['post'] },
            title: { type: titleType } as never,
            author: { $ref: '#/components/schemas/Author' },
          },
        },
        Comment: {
          type: 'object',
          additionalProperties: false,
          required: ['kind', 'text', 'author'],
          properties: {
            kind: { type: 'string', enum: ['comment'] },
            text: { type: 'string' },
            author: { $ref: '#/components/schemas/Author' },
          },
        },
        Author: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: { name: { type: 'string' }, links: { type: 'array', items: { $ref: '#/components/schemas/Link' } } },
        },
        Link: { type: 'string', format: 'uri' },
      },
    },
  };
}

const author = { name: 'ann', links: ['https://example.com/ann'] };
const post = { kind: 'post', title: 'Hello', author };
const comment = { kind: 'comment', text: 'Hi', author };

describe('a oneOf told apart by an enum property', () => {
  const validator = createResponseValidator(smallDocument());

  it('accepts each branch', () => {
    validator.validate('GET', '/things/1', 200, { items: [post, comment], next: null });
  });

  it('reports only the problems of the branch whose enum matched, also inside referenced schemas', () => {
    expect(problemsOf(validator, 'GET', '/things/1', 200, { items: [{ ...comment, text: 1, author: {} }], next: null })).toEqual([
      '/items/0/text must be string',
      '/items/0/author is missing property "name"',
    ]);
    expect(
      problemsOf(validator, 'GET', '/things/1', 200, { items: [{ ...post, author: { name: 'ann', links: ['not a uri'] } }], next: null }),
    ).toEqual(['/items/0/author/links/0 must match format "uri"']);
  });

  it('keeps each item to its own branch', () => {
    const problems = problemsOf(validator, 'GET', '/things/1', 200, {
      items: [post, { ...comment, text: 1 }, { ...post, title: 2 }],
      next: null,
    });
    expect(problems).toEqual(['/items/1/text must be string', '/items/2/title must be string']);
  });

  it('reports every branch when the enum property matches none', () => {
    const problems = problemsOf(validator, 'GET', '/things/1', 200, { items: [{ ...post, kind: 'reel' }], next: null });
    expect(problems).toContain('/items/0 must match exactly one schema in oneOf');
    expect(problems.filter((p) => p.includes('must be equal to one of the allowed values'))).toHaveLength(2);
  });

  it('narrows a service error the same way in the contract, whether or not it is nested in another oneOf', () => {
    const contract = createResponseValidator();
    expect(problemsOf(contract, 'GET', '/v1/jobs/job_x', 404, { detail: { error: 'job_not_found', message: 'x' } })).toEqual([
      '/detail is missing property "job_id"',
    ]);
    // 422: HTTPValidationError or ServiceError, the latter holding the oneOf of every service error.
    const problems = problemsOf(contract, 'POST', '/v1/batches', 422, { detail: { error: 'duplicate_batch_target', message: 'x' } });
    expect(problems).toContain('/detail is missing property "duplicates"');
    expect(problems.filter((p) => p.includes('job_id'))).toEqual([]);
  });

  it('narrows a job item of the contract to the branch of its kind', () => {
    const document = loadOpenApiDocument();
    const job = valueAt(document, '#/components/examples/JobCompleted/value') as { result: Array<Record<string, unknown>> };
    const contract = createResponseValidator();
    contract.validate('GET', '/v1/jobs/job_1', 200, job);
    const broken = { ...job, result: [{ ...job.result[0], followers_count: 'many' }] };
    const problems = problemsOf(contract, 'GET', '/v1/jobs/job_1', 200, broken);
    expect(problems).toContain('/result/0/followers_count must be integer');
    expect(problems.filter((p) => p.startsWith('/result/0') && p.includes('unexpected property'))).toEqual([]);
  });
});

describe('the contract', () => {
  const validator = createResponseValidator();
  const document = loadOpenApiDocument();
  const account = valueAt(document, '#/paths/~1v1~1account/get/responses/200/content/application~1json/example') as Record<string, unknown>;
  const job = valueAt(document, '#/components/examples/JobCompleted/value') as Record<string, unknown>;

  it('accepts documented bodies, and null where a property is nullable', () => {
    validator.validate('GET', '/v1/account', 200, account, 'application/json; charset=utf-8');
    validator.validate('GET', '/v1/jobs/job_1', 200, { ...job, next_attempt_at: null, error: null });
  });

  it('rejects what openapi.yaml does not document', () => {
    expect(problemsOf(validator, 'GET', '/v1/account', 418, account)).toEqual([
      expect.stringMatching(/^status 418 is not documented for getAccount/),
    ]);
    expect(problemsOf(validator, 'GET', '/v1/account', 200, '<p>', 'text/html')).toEqual([
      expect.stringMatching(/^content type text\/html is not documented/),
    ]);
    expect(problemsOf(validator, 'GET', '/v1/account', 200, { ...account, surprise: 1 })).toEqual([
      '(root) has unexpected property "surprise"',
    ]);
    expect(problemsOf(validator, 'GET', '/v1/account', 200, { ...account, auth_type: 'password' })).toEqual([
      expect.stringMatching(/^\/auth_type must be equal to one of the allowed values/),
    ]);
    const { organization_id: _dropped, ...missing } = account;
    expect(problemsOf(validator, 'GET', '/v1/account', 200, missing)).toEqual(['(root) is missing property "organization_id"']);
    expect(problemsOf(validator, 'GET', '/v1/jobs/job_1', 200, { ...job, created_at: 'yesterday' })).toEqual([
      '/created_at must match format "date-time"',
    ]);
    expect(problemsOf(validator, 'GET', '/v1/jobs/job_1', 200, { ...job, attempts: null })).toEqual(['/attempts must be integer']);
  });

  it('compiles a document of its own the same way, without the cache', () => {
    const own = createResponseValidator(loadOpenApiDocument());
    for (const body of [{ ...account, surprise: 1 }, { ...account, auth_type: 'password' }, account]) {
      const outcome = (v: ResponseValidator) => {
        try {
          v.validate('GET', '/v1/account', 200, body);
          return [];
        } catch (error) {
          return (error as ResponseContractError).problems;
        }
      };
      expect(outcome(own)).toEqual(outcome(validator));
    }
  });

  it('is kept under the key of openapi.yaml beside the code', () => {
    const file = path.join(CONTRACT_CACHE_DIR, `response-validators-${responseSchemasKey(contractDigest())}.js`);
    expect(statSync(file).isFile()).toBe(true);
  });
});

describe('the compiled module', () => {
  /** Modules required before are read again, as by a new process. */
  const newProcess = () => jest.resetModules();
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(CONTRACT_CACHE_DIR, 'test-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const page = '#/paths/~1things~1{id}/get/responses/200/content/application~1json/schema';
  const body = { items: [{ ...post, title: 7 }], next: null };

  it('is compiled and written once, then required by the next process', () => {
    const first = cachedResponseSchemas(() => smallDocument(), 'a'.repeat(64), dir);
    expect(first.origin).toBe('compiled');
    expect(path.basename(first.file)).toBe(`response-validators-${responseSchemasKey('a'.repeat(64))}.js`);
    expect(readdirSync(dir)).toEqual([path.basename(first.file)]);
    newProcess();
    const second = cachedResponseSchemas(() => smallDocument(), 'a'.repeat(64), dir);
    expect(second.origin).toBe('cache');
    expect(second.validator(page)?.(body)).toBe(false);
    expect(second.validator(page)?.({ items: [post], next: '2026-01-01T00:00:00Z' })).toBe(true);
    expect(second.oneOfs()).toEqual(first.oneOfs());
    expect(second.operations).toEqual(first.operations);
  });

  it('compiles again over a module cut short or not JavaScript', () => {
    const { file } = cachedResponseSchemas(() => smallDocument(), 'a'.repeat(64), dir);
    const whole = readFileSync(file, 'utf8');
    for (const broken of [whole.slice(0, Math.floor(whole.length / 2)), 'not javascript {', '', 'module.exports = 1;']) {
      writeFileSync(file, broken);
      newProcess();
      const again = cachedResponseSchemas(() => smallDocument(), 'a'.repeat(64), dir);
      expect(again.origin).toBe('compiled');
      expect(again.validator(page)?.(body)).toBe(false);
      expect(readFileSync(file, 'utf8')).toBe(whole);
    }
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('writes a changed contract to a module of its own, and uses no module planted for another contract', () => {
    const a = cachedResponseSchemas(() => smallDocument(), 'a'.repeat(64), dir);
    const b = cachedResponseSchemas(() => smallDocument('integer'), 'b'.repeat(64), dir);
    expect(b.origin).toBe('compiled');
    expect(b.file).not.toBe(a.file);
    expect(readdirSync(dir).sort()).toEqual([path.basename(a.file), path.basename(b.file)].sort());
    // The module of contract a, planted under the name of contract b, is not used for b.
    writeFileSync(b.file, readFileSync(a.file));
    newProcess();
    const planted = cachedResponseSchemas(() => smallDocument('integer'), 'b'.repeat(64), dir);
    expect(planted.origin).toBe('compiled');
    expect(planted.validator(page)?.(body)).toBe(true);
    newProcess();
    expect(cachedResponseSchemas(() => smallDocument('integer'), 'b'.repeat(64), dir).validator(page)?.(body)).toBe(true);
  });
});
