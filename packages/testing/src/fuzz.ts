import fc from 'fast-check';
import { CATALOG, isMonitorable, normalizeTarget, type Platform, PLATFORMS } from '@sdx/catalog';
import type { OpenApiDocument } from '@sdx/contract';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';

/**
 * Request generation for the contract fuzzer: for every operation of openapi.yaml, arbitraries
 * (fast-check) of valid requests drawn from the schemas, and of requests mutated the ways a
 * hostile or careless client mutates them. A generated request is a template: path IDs name a
 * pool ("an ID the service created", "an ID of another workspace") resolved when it is sent,
 * so later requests reuse what earlier ones created.
 */

/** The part of an OpenAPI 3.0 schema the fuzzer reads (the subset of JSON Schema openapi.yaml uses); or a `$ref` to one. */
interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  nullable?: boolean;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

type Parameter = OpenAPIV3.ParameterObject & { schema?: Schema };
type Operation = OpenAPIV3.OperationObject;

export interface FuzzOperation {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  template: string;
  pathParams: string[];
  query: Array<{ name: string; schema: Schema }>;
  headers: Array<{ name: string; schema: Schema }>;
  body: Schema | null;
  secured: boolean;
  /** Only a browser session may call it (security: SessionCookie alone). */
  sessionOnly: boolean;
}

/** How a path parameter is filled when the request is sent. */
export type IdChoice = { kind: 'created'; pick: number } | { kind: 'foreign'; pick: number } | { kind: 'literal'; value: string };

export type Credential = 'valid' | 'none' | 'unknown' | 'other_workspace' | 'bearer' | 'session' | 'session_without_csrf';

/**
 * A value the sender puts into the body when the request is sent, from what the service has
 * answered so far: an email of a signed-up user, a fresh email, an invitation's token, a mailed
 * verification or reset token, a current two-factor code or a recovery code, a destination the
 * fuzzed workspace created (null while there is none).
 */
export interface Fill {
  pool:
    | 'new_email'
    | 'user_email'
    | 'invitee_email'
    | 'invitation_token'
    | 'verification_token'
    | 'reset_token'
    | 'totp_code'
    | 'recovery_code'
    | 'destination_id';
  pick: number;
}

export interface FuzzRequest {
  operation: FuzzOperation;
  ids: Record<string, IdChoice>;
  query: Array<[string, string]>;
  headers: Record<string, string>;
  credential: Credential;
  /** Raw body text (JSON unless mutated), or undefined for none. */
  body?: string;
  contentType?: string;
  /** Body keys filled when the request is sent (the body is then a JSON object). */
  fills: Record<string, Fill>;
  /** What was done to the request, for reports. */
  mutation: string;
}

/** What the fuzzer knows of the accounts it signed up, to write bodies their checks accept. */
export interface FuzzAccounts {
  /** The password of every user the fuzzer signs up. */
  password: string;
  /** A reachable bucket (a loopback S3) that destinations' admissible bodies name. */
  bucket?: FuzzBucket;
}

/** An S3-compatible store the fuzzer runs, and the bucket in it destinations write to. */
export interface FuzzBucket {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function refOf(node: unknown): string | undefined {
  return node !== null && typeof node === 'object' && '$ref' in node && typeof node.$ref === 'string' ? node.$ref : undefined;
}

/** `value`, or what its `$ref` (JSON pointer into the document) names, followed up to 10 times. */
function resolveRef<T>(document: OpenApiDocument, value: T | OpenAPIV3.ReferenceObject): T {
  let node: unknown = value;
  for (let i = 0, ref = refOf(node); ref !== undefined && i < 10; i += 1, ref = refOf(node)) {
    node = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>(
        (n, key) =>
          n !== null && typeof n === 'object' ? (n as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined,
        document,
      );
  }
  // The document is openapi.yaml, which the contract tests check: a reference names what its place expects.
  return node as T;
}

/**
 * Operations that answer a success only inside the OAuth protocol flow (a client registered,
 * a PKCE code consented and exchanged, in order), which generated requests do not walk: they
 * are covered end to end by apps/api/test/oauth-flow.test.ts, and their refusals there. The
 * metadata and the registration stay fuzzed.
 */
export const OAUTH_FLOW_OPERATIONS: ReadonlySet<string> = new Set([
  'authorizeOAuthClient',
  'createOAuthToken',
  'revokeOAuthToken',
  'createOAuthConsent',
]);

/**
 * Operations documented so that clients know their answer, which never succeed: GET and DELETE
 * /mcp (the MCP server is stateless, with no session stream to open or end: 405). Covered by
 * the MCP tests.
 */
export const NEVER_SUCCEEDING_OPERATIONS: ReadonlySet<string> = new Set(['openMcpStream', 'endMcpSession']);

/** Every operation of the document (but the OAuth flow's), with its parameters and body schema resolved. */
export function fuzzOperations(document: OpenApiDocument): FuzzOperation[] {
  const operations: FuzzOperation[] = [];
  for (const [template, rawItem] of Object.entries(document.paths)) {
    const item: OpenAPIV3.PathItemObject = rawItem;
    for (const method of METHODS) {
      const op: Operation | undefined = item[method];
      if (!op?.operationId || OAUTH_FLOW_OPERATIONS.has(op.operationId) || NEVER_SUCCEEDING_OPERATIONS.has(op.operationId)) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => resolveRef<Parameter>(document, p));
      const bodySchema = op.requestBody
        ? resolveRef<OpenAPIV3.RequestBodyObject>(document, op.requestBody).content?.['application/json']?.schema
        : undefined;
      const body = bodySchema ? resolveRef<Schema>(document, bodySchema) : null;
      const schemaOf = (p: Parameter): Schema => (p.schema ? resolveRef<Schema>(document, p.schema) : {});
      operations.push({
        operationId: op.operationId,
        method,
        template,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: schemaOf(p) })),
        headers: params.filter((p) => p.in === 'header').map((p) => ({ name: p.name, schema: schemaOf(p) })),
        body,
        secured: !(Array.isArray(op.security) && op.security.length === 0),
        sessionOnly:
          Array.isArray(op.security) && op.security.length > 0 && op.security.every((s) => Object.keys(s).join() === 'SessionCookie'),
      });
    }
  }
  return operations;
}

/** Strings a careless or hostile client sends. */
export const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '%00',
  '\u202e\u0301',
  '😀'.repeat(40),
  "' or 1=1 --",
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '{"$ne":null}',
  'a'.repeat(300),
  'a'.repeat(5000),
  '\n\r\t',
  'null',
  '-1',
];

/** Query values that are not plain decimal integers, or not what the enum lists. */
const HOSTILE_QUERY = [
  'Infinity',
  '-Infinity',
  'NaN',
  '1e309',
  '1e3',
  '0x10',
  '1.0',
  '+5',
  ' 5',
  '5 ',
  '',
  '-1',
  '0',
  '101',
  '99999999999999999999',
  'true',
  '%00',
  'json%00',
  'JSON',
];

/** Field-name hints so schema-valid bodies are often also meaningful (and reach the domain). */
const HINTS: Record<string, fc.Arbitrary<unknown>> = {
  platform: fc.constantFrom('instagram', 'tiktok', 'youtube', 'twitter', 'facebook'),
  target: fc.constantFrom(
    'natgeo',
    'nasa',
    '@nasa',
    'bbcnews',
    'https://www.instagram.com/natgeo/',
    'https://x.com/nasa',
    'UCBJycsmduvYEL83R_U4JriQ',
    '#travel',
    'travel',
    '7301112233445566778',
    'C0abc123',
  ),
  timezone: fc.constantFrom('UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'),
  // Monthly plans: the default plans (free and an unknown one refused).
  plan_id: fc.constantFrom('starter', 'pro', 'free', 'enterprise'),
  name: fc.string({ minLength: 1, maxLength: 40 }),
  url: fc.constantFrom('https://hooks.example.com/sdx', 'https://receiver.example.org/in?x=1', 'http://hooks.example.com/plain'),
  // OAuth client registration: loopback and https redirect URIs (accepted), and others (refused).
  grant_types: fc.constantFrom(['authorization_code', 'refresh_token'], ['authorization_code'], ['client_credentials']),
  redirect_uris: fc.array(
    fc.constantFrom(
      'http://127.0.0.1:8765/callback',
      'https://agent.example.com/cb',
      'http://localhost/cb',
      'http://agent.example.com/cb',
      'myapp://cb',
    ),
    { minLength: 1, maxLength: 3 },
  ),
};

/** Targets of every kind; each operation gets the first its platform accepts. */
const CANDIDATE_TARGETS = [
  'natgeo',
  '@nasa',
  'travel',
  'US',
  'https://www.instagram.com/p/Cabc123/',
  'https://www.tiktok.com/@nasa/video/7301112233445566778',
  'https://x.com/nasa/status/1234567890123456789',
  'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
  'https://www.facebook.com/nasa/posts/1234567890',
  'dQw4w9WgXcQ',
  '7301112233445566778',
  '1234567890123456789',
  'Cabc123',
  'UCBJycsmduvYEL83R_U4JriQ',
  'PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf',
  '17912345678901234',
  '1234567890',
  'https://www.instagram.com/stories/highlights/17912345678901234/',
  'https://www.youtube.com/playlist?list=PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf',
  'https://www.facebook.com/ads/library/?id=1234567890',
  'https://www.instagram.com/p/Cabc123/c/17912345678901234/',
];

/** One valid (platform, operation, target) per operation of the catalog that some candidate fits; `list` when it answers more than one result. */
export const VALID_RECIPES: Array<{ platform: Platform; operation: string; target: string; list: boolean }> = PLATFORMS.flatMap(
  (platform) =>
    CATALOG[platform].flatMap((spec) => {
      const target = CANDIDATE_TARGETS.find((t) => normalizeTarget(platform, spec.target, t).ok);
      return target ? [{ platform, operation: spec.operation, target, list: spec.max_results > 1 }] : [];
    }),
);

/** The recipes a monitor may run (extensions-3.md 3: profiles and a target's own posts or videos). */
const MONITORABLE_RECIPES = VALID_RECIPES.filter((recipe) => isMonitorable(recipe.platform, recipe.operation));

const futureDate = fc.date({ min: new Date('2030-01-01T00:00:00Z'), max: new Date('2035-01-01T00:00:00Z'), noInvalidDate: true });

/** An arbitrary of values valid against `schema` (the subset of JSON Schema openapi.yaml uses). */
export function arbitraryOf(document: OpenApiDocument, raw: Schema, name?: string): fc.Arbitrary<unknown> {
  const schema = resolveRef<Schema>(document, raw);
  const nullable = (arb: fc.Arbitrary<unknown>) => (schema.nullable ? fc.option(arb, { nil: null }) : arb);
  if (schema.enum) return nullable(fc.constantFrom(...schema.enum));
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (alternatives) return nullable(fc.oneof(...alternatives.map((s) => arbitraryOf(document, s, name))));
  if (schema.allOf)
    return arbitraryOf(document, Object.assign({}, ...schema.allOf.map((s) => resolveRef<Schema>(document, s))) as Schema, name);
  switch (schema.type) {
    case 'object': {
      const properties = schema.properties ?? {};
      const required = new Set<string>(schema.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of Object.entries(properties)) record[key] = arbitraryOf(document, sub, key);
      return nullable(fc.record(record, { requiredKeys: [...required] }));
    }
    case 'array': {
      const items =
        name === 'targets'
          ? fc.oneof(HINTS.target, fc.string({ minLength: 1, maxLength: 30 }))
          : arbitraryOf(document, schema.items ?? {}, undefined);
      const maxLength = Math.min(schema.maxItems ?? 5, name === 'targets' ? 5 : 5);
      const arrays = fc.array(items, { minLength: schema.minItems ?? 0, maxLength: Math.max(maxLength, schema.minItems ?? 0) });
      if (name && name !== 'targets' && HINTS[name])
        return nullable(fc.oneof({ weight: 4, arbitrary: HINTS[name] }, { weight: 1, arbitrary: arrays }));
      return nullable(arrays);
    }
    case 'integer': {
      const min = schema.minimum ?? -1000;
      const max = schema.maximum ?? 1000;
      // Mostly small values: large limits are valid but cost credits and time.
      return nullable(
        fc.oneof(
          { weight: 4, arbitrary: fc.integer({ min, max: Math.min(max, min + 20) }) },
          { weight: 1, arbitrary: fc.integer({ min, max }) },
        ),
      );
    }
    case 'number':
      return nullable(fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true }));
    case 'boolean':
      return nullable(fc.boolean());
    case 'string': {
      if (schema.format === 'date-time') return nullable(futureDate.map((d) => d.toISOString()));
      if (name && HINTS[name])
        return nullable(
          fc.oneof(
            { weight: 4, arbitrary: HINTS[name] },
            { weight: 1, arbitrary: fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) }) },
          ),
        );
      return nullable(fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) }));
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value of the wrong kind for any field. */
const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 31), [], {}, [1, 2], { a: 1 }, 'x'),
  fc.constantFrom(...HOSTILE_STRINGS),
);

function deep(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i += 1) value = i % 2 ? [value] : { a: value };
  return value;
}

/** Ways of breaking a body, each named. */
function mutatedBody(document: OpenApiDocument, schema: Schema): fc.Arbitrary<{ body?: string; contentType?: string; mutation: string }> {
  const valid = arbitraryOf(document, schema) as fc.Arbitrary<Record<string, unknown>>;
  const keys = Object.keys(resolveRef<Schema>(document, schema).properties ?? {});
  const key = keys.length ? fc.constantFrom(...keys) : fc.constant('x');
  return fc.oneof(
    fc.tuple(valid, key).map(([b, k]) => {
      const copy = { ...b };
      delete copy[k];
      return { body: JSON.stringify(copy), mutation: `body without ${k}` };
    }),
    fc
      .tuple(valid, key, wrongValue)
      .map(([b, k, v]) => ({ body: JSON.stringify({ ...b, [k]: v }), mutation: `body ${k} of the wrong kind` })),
    fc
      .tuple(valid, fc.constantFrom(...HOSTILE_STRINGS), key)
      .map(([b, s, k]) => ({ body: JSON.stringify({ ...b, [k]: s }), mutation: `body ${k} hostile string` })),
    fc
      .tuple(valid, fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }))
      .map(([b, k, v]) => ({ body: JSON.stringify({ ...b, [`x_${k}`]: v }), mutation: 'body with an unknown key' })),
    fc
      .tuple(valid, fc.constantFrom('a\u0000', '\ud800'))
      .map(([b, k]) => ({ body: JSON.stringify({ ...b, [k]: 1 }), mutation: 'body key Postgres cannot store' })),
    fc
      .tuple(valid, fc.integer({ min: 30, max: 40 }), key)
      .map(([b, n, k]) => ({ body: JSON.stringify({ ...b, [k]: deep(n) }), mutation: `body nested ${n} deep` })),
    fc.constantFrom(
      { body: '', mutation: 'empty body' },
      { body: '{', mutation: 'truncated JSON' },
      { body: 'null', mutation: 'JSON null' },
      { body: '[]', mutation: 'JSON array' },
      { body: '"text"', mutation: 'JSON string' },
      { body: '{"a":1}x', mutation: 'trailing garbage' },
      { body: '['.repeat(50_000), mutation: 'deep unterminated nesting' },
      { body: JSON.stringify({ target: 'a'.repeat(1_100_000) }), mutation: 'body over 1 MiB' },
      { body: 'operation=profile&target=nasa', contentType: 'application/x-www-form-urlencoded', mutation: 'form body' },
      { body: '{"operation":"profile","target":"nasa"}', contentType: 'text/plain', mutation: 'JSON as text/plain' },
      {
        body: '{"operation":"profile","target":"nasa"}',
        contentType: 'application/json; charset=latin1',
        mutation: 'JSON in another charset',
      },
      { body: undefined, mutation: 'no body' },
    ),
  );
}

const idChoice: fc.Arbitrary<IdChoice> = fc.oneof(
  { weight: 6, arbitrary: fc.nat().map((pick): IdChoice => ({ kind: 'created', pick })) },
  { weight: 1, arbitrary: fc.nat().map((pick): IdChoice => ({ kind: 'foreign', pick })) },
  {
    weight: 2,
    arbitrary: fc
      // No dot segments ('..', '%2e%2e'): the client removes them before sending (WHATWG URL), so
      // the request would name another path than the operation's.
      .oneof(
        fc.constantFrom(
          'job_00000000000000000000000000',
          'bat_0',
          'sch_0',
          'dst_0',
          '0',
          '-1',
          'null',
          '%00',
          'job_%00',
          '%ff',
          '%ED%A0%80',
          'a%20b',
          '%E2%80%AE',
        ),
        fc
          .string({ minLength: 1, maxLength: 40 })
          .map(encodeURIComponent)
          .filter((value) => value !== '.' && value !== '..'),
      )
      .map((value): IdChoice => ({ kind: 'literal', value })),
  },
);

/** Mostly the workspace's API key, often the signed-in owner's session; now and then none, a wrong one or no CSRF token. */
const credential: fc.Arbitrary<Credential> = fc.oneof(
  { weight: 16, arbitrary: fc.constant<Credential>('valid') },
  { weight: 6, arbitrary: fc.constant<Credential>('session') },
  { weight: 2, arbitrary: fc.constant<Credential>('bearer') },
  { weight: 2, arbitrary: fc.constantFrom<Credential>('none', 'unknown', 'other_workspace', 'session_without_csrf') },
);

/** Operations only a browser session may call: mostly a session, now and then an API key, none or no CSRF token. */
const sessionCredential: fc.Arbitrary<Credential> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Credential>('session') },
  { weight: 2, arbitrary: fc.constantFrom<Credential>('valid', 'none', 'unknown', 'session_without_csrf') },
);

function queryArbitrary(document: OpenApiDocument, op: FuzzOperation): fc.Arbitrary<{ query: Array<[string, string]>; mutated: boolean }> {
  const valid = fc
    .tuple(
      ...op.query.map((p) =>
        fc.option(
          arbitraryOf(document, p.schema).map((v) => [p.name, String(v)] as [string, string]),
          { nil: null },
        ),
      ),
    )
    .map((pairs) => ({ query: pairs.filter((p): p is [string, string] => p !== null), mutated: false }));
  const hostile = op.query.length
    ? fc
        .tuple(fc.constantFrom(...op.query.map((p) => p.name)), fc.constantFrom(...HOSTILE_QUERY))
        .map(([n, v]) => ({ query: [[n, v]] as Array<[string, string]>, mutated: true }))
    : fc.constant({ query: [] as Array<[string, string]>, mutated: false });
  const unknown = fc
    .constantFrom('x', 'api_key', 'limit', 'format', 'a%00')
    .map((n) => ({ query: [[n, '1']] as Array<[string, string]>, mutated: true }));
  return fc.oneof({ weight: 8, arbitrary: valid }, { weight: 2, arbitrary: hostile }, { weight: 1, arbitrary: unknown });
}

function headerArbitrary(op: FuzzOperation): fc.Arbitrary<Record<string, string>> {
  const names = new Set(op.headers.map((h) => h.name));
  const parts: Array<fc.Arbitrary<Record<string, string>>> = [];
  /** The header absent `absent` times out of `absent + 1`, else one of `values`. */
  const header = (name: string, values: fc.Arbitrary<string>, absent = 1): fc.Arbitrary<Record<string, string>> =>
    fc.oneof(
      { weight: absent, arbitrary: fc.constant<Record<string, string>>({}) },
      { weight: 1, arbitrary: values.map((v): Record<string, string> => ({ [name]: v })) },
    );
  if (names.has('Idempotency-Key'))
    parts.push(
      header('Idempotency-Key', fc.oneof(fc.uuid(), fc.constantFrom('k1', 'k2', 'same-key', 'x'.repeat(128), 'x'.repeat(129), ''))),
    );
  if (names.has('Cache-Control')) parts.push(header('Cache-Control', fc.constantFrom('no-cache', 'max-age=0', 'garbage')));
  parts.push(header('X-Workspace-ID', fc.constantFrom('self', 'self', 'ws_other', 'x'.repeat(37), ''), 10));
  // MCP's Streamable HTTP wants both media types accepted (else 406): mostly sent, sometimes not or half.
  if (op.template === '/mcp')
    parts.push(
      fc.oneof(
        { weight: 1, arbitrary: fc.constant({}) },
        { weight: 6, arbitrary: fc.constantFrom('application/json, text/event-stream', 'application/json').map((v) => ({ Accept: v })) },
      ),
    );
  return fc.tuple(...parts).map((hs) => Object.assign({}, ...hs) as Record<string, string>);
}

type Body = { body?: string; contentType?: string; fills?: Record<string, Fill>; mutation: string };

const fill = (pool: Fill['pool']) => fc.nat().map((pick): Fill => ({ pool, pick }));

/**
 * Bodies of the accounts' operations that their checks accept, once the sender has filled in
 * what only the service's earlier answers tell (an unused email, a signed-up user's email, an
 * invitation's token): sign-up, sign-in with the fuzzer's password, a password change that
 * keeps it, invitations to users the fuzzer signed up, and their acceptance.
 */
function accountBody(op: FuzzOperation, accounts: FuzzAccounts): fc.Arbitrary<Body> | null {
  const roles = fc.constantFrom('viewer', 'member', 'admin', 'owner');
  switch (op.operationId) {
    case 'signUp':
      return fc.tuple(fill('new_email'), fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: null })).map(([email, name]) => ({
        body: JSON.stringify({ email: '', password: accounts.password, display_name: name }),
        fills: { email },
        mutation: 'admissible',
      }));
    case 'logIn':
      return fill('user_email').map((email) => ({
        body: JSON.stringify({ email: '', password: accounts.password }),
        fills: { email },
        mutation: 'admissible',
      }));
    case 'changePassword':
      return fc.constant({
        body: JSON.stringify({ current_password: accounts.password, new_password: accounts.password }),
        mutation: 'admissible',
      });
    case 'createInvitation':
      return fc
        .tuple(fill('invitee_email'), roles)
        .map(([email, role]) => ({ body: JSON.stringify({ email: '', role }), fills: { email }, mutation: 'admissible' }));
    case 'acceptInvitation':
      return fill('invitation_token').map((token) => ({ body: JSON.stringify({ token: '' }), fills: { token }, mutation: 'admissible' }));
    case 'verifyEmail':
      return fill('verification_token').map((token) => ({
        body: JSON.stringify({ token: '', password: accounts.password }),
        fills: { token },
        mutation: 'admissible',
      }));
    case 'confirmPasswordReset':
      return fill('reset_token').map((token) => ({
        body: JSON.stringify({ token: '', new_password: accounts.password }),
        fills: { token },
        mutation: 'admissible',
      }));
    case 'resendVerification':
    case 'requestPasswordReset':
      return fill('user_email').map((email) => ({ body: JSON.stringify({ email: '' }), fills: { email }, mutation: 'admissible' }));
    case 'enableTwoFactor':
      return fill('totp_code').map((code) => ({ body: JSON.stringify({ code: '' }), fills: { code }, mutation: 'admissible' }));
    case 'disableTwoFactor':
      return fill('recovery_code').map((code) => ({
        body: JSON.stringify({ password: accounts.password, code: '' }),
        fills: { code },
        mutation: 'admissible',
      }));
    // Billing: the packs on sale, auto-recharge off (on needs a saved card), and Stripe events the
    // sender signs, of the types the service handles with objects that may name nothing it knows.
    case 'postMcpMessage':
      // JSON-RPC messages the MCP server answers (the tools' own cases are in mcp-*.test.ts).
      return fc
        .constantFrom(
          {
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
          },
          { jsonrpc: '2.0', id: 2, method: 'tools/list' },
          { jsonrpc: '2.0', id: 3, method: 'ping' },
          { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_usage', arguments: {} } },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
        )
        .map((message) => ({ body: JSON.stringify(message), mutation: 'admissible' }));
    case 'createCheckout':
      return fc.constantFrom('pack_10k', 'pack_100k').map((pack_id) => ({ body: JSON.stringify({ pack_id }), mutation: 'admissible' }));
    case 'updateAutoRecharge':
      return fc.nat({ max: 100_000 }).map((threshold) => ({
        body: JSON.stringify({ enabled: false, threshold_credits: threshold, pack_id: 'pack_10k' }),
        mutation: 'admissible',
      }));
    case 'receiveStripeWebhook':
      return fc
        .record({
          id: fc.stringMatching(/^evt_[a-z0-9]{4,12}$/),
          type: fc.constantFrom(
            'checkout.session.completed',
            'checkout.session.async_payment_succeeded',
            'payment_intent.succeeded',
            'payment_intent.payment_failed',
            'charge.refunded',
            'customer.created',
          ),
          object: fc.record(
            {
              id: fc.constantFrom('cs_fuzz', 'pi_fuzz', 'ch_fuzz', 'x'),
              payment_status: fc.constantFrom('paid', 'unpaid'),
              amount_total: fc.integer({ min: -1, max: 10_000 }),
              amount: fc.integer({ min: 0, max: 10_000 }),
              amount_refunded: fc.integer({ min: 0, max: 10_000 }),
              currency: fc.constantFrom('usd', 'eur'),
              payment_intent: fc.constantFrom('pi_fuzz', null),
              metadata: fc.record(
                {
                  workspace_id: fc.constantFrom('ws_fuzz', ''),
                  pack_id: fc.constantFrom('pack_10k', 'pack_x'),
                  kind: fc.constantFrom('auto_recharge', 'x'),
                },
                { requiredKeys: [] },
              ),
            },
            { requiredKeys: [] },
          ),
        })
        .map(({ id, type, object }) => ({ body: JSON.stringify({ id, object: 'event', type, data: { object } }), mutation: 'admissible' }));
    default:
      return null;
  }
}

/**
 * Bodies of POST /v1/destinations whose check write succeeds: the run's bucket, its endpoint and
 * keys, addressed in the path; the name, prefix, region and format fuzzed (a prefix without dot
 * segments or a leading slash, as the loopback store keeps its objects in a folder; a region of
 * the pattern's form).
 */
function destinationBody(document: OpenApiDocument, op: FuzzOperation, accounts: FuzzAccounts): fc.Arbitrary<Body> | null {
  const bucket = accounts.bucket;
  if (op.operationId !== 'createDestination' || !op.body || !bucket) return null;
  return fc
    .tuple(
      arbitraryOf(document, op.body) as fc.Arbitrary<Record<string, unknown>>,
      fc.option(fc.constantFrom('us-east-1', 'eu-west-1', 'auto'), { nil: undefined }),
    )
    .map(([b, region]): Body => {
      const merged: Record<string, unknown> = {
        ...b,
        type: 's3',
        bucket: bucket.bucket,
        endpoint: bucket.endpoint,
        force_path_style: true,
        access_key_id: bucket.accessKeyId,
        secret_access_key: bucket.secretAccessKey,
      };
      if (typeof merged.prefix === 'string') merged.prefix = merged.prefix.replace(/\.\./g, '_').replace(/^\//, '');
      else delete merged.prefix;
      delete merged.region;
      if (region !== undefined) merged.region = region;
      return { body: JSON.stringify(merged), mutation: 'admissible' };
    });
}

/** A body's `destination_id`: mostly a destination the workspace created, else absent or null. */
const destinationChoice: fc.Arbitrary<{ value?: null; fills: Record<string, Fill> }> = fc.oneof(
  { weight: 2, arbitrary: fill('destination_id').map((f) => ({ fills: { destination_id: f } })) },
  { weight: 1, arbitrary: fc.constant({ fills: {} }) },
  { weight: 1, arbitrary: fc.constant({ value: null, fills: {} }) },
);

/** Requests for one operation: mostly valid, a share mutated in one place. */
export function requestArbitrary(
  document: OpenApiDocument,
  op: FuzzOperation,
  accounts: FuzzAccounts = { password: 'fuzz-password-0' },
): fc.Arbitrary<FuzzRequest> {
  const ids = fc
    .tuple(...op.pathParams.map(() => idChoice))
    .map((choices) => Object.fromEntries(op.pathParams.map((name, i) => [name, choices[i]])));
  const properties = op.body ? Object.keys(resolveRef(document, op.body).properties ?? {}) : [];
  // Schema-valid bodies with a recipe the catalog accepts, a small limit and no bundle: these
  // pass admission, so the IDs they create feed the requests that follow.
  // A monitor's change that its checks accept (a random one often contradicts its recurrence or names targets the platform refuses).
  const monitorChange =
    op.operationId === 'updateMonitor'
      ? fc
          .record({ name: HINTS.name, limit: fc.integer({ min: 1, max: 5 }) })
          .map((b): Body => ({ body: JSON.stringify(b), mutation: 'admissible' }))
      : null;
  const admissible =
    accountBody(op, accounts) ??
    destinationBody(document, op, accounts) ??
    monitorChange ??
    (op.body && properties.includes('operation')
      ? fc
          .tuple(
            arbitraryOf(document, op.body) as fc.Arbitrary<Record<string, unknown>>,
            fc.constantFrom(...(op.operationId === 'createMonitor' ? MONITORABLE_RECIPES : VALID_RECIPES)),
            fc.integer({ min: 1, max: 5 }),
            fc.boolean(),
            destinationChoice,
            HINTS.timezone,
          )
          .map(([b, recipe, limit, single, destination, timezone]): Body => {
            const merged: Record<string, unknown> = {
              ...b,
              platform: recipe.platform,
              operation: recipe.operation,
              limit,
              include_posts: 0,
            };
            // A monitor's: no alerts, and the recurrence's defaults (the random ones often contradict its frequency).
            if (op.operationId === 'createMonitor') for (const key of ['alerts', 'time_of_day', 'day_of_week']) delete merged[key];
            // A body without a bundle option (a monitor's) takes none: unknown keys are refused.
            if (!properties.includes('include_posts')) delete merged.include_posts;
            // A schedule's: a time zone that exists, and delivery new_only only for a list operation.
            if (properties.includes('timezone')) merged.timezone = timezone;
            if (merged.delivery === 'new_only' && !recipe.list) merged.delivery = 'all';
            // A destination the workspace created (filled when sent), none, or null.
            delete merged.destination_id;
            const fills = properties.includes('destination_id') ? destination.fills : {};
            if (properties.includes('destination_id') && (destination.value === null || Object.keys(fills).length))
              merged.destination_id = null;
            // A body taking either (a quote: exactly one of the two) gets one of them.
            const both = properties.includes('target') && properties.includes('targets');
            delete merged.target;
            delete merged.targets;
            if (properties.includes('target') && (single || !both)) merged.target = recipe.target;
            else if (properties.includes('targets')) merged.targets = [recipe.target];
            return { body: JSON.stringify(merged), fills, mutation: 'admissible' };
          })
      : null);
  const body: fc.Arbitrary<Body> = op.body
    ? fc.oneof(
        ...(admissible ? [{ weight: 3, arbitrary: admissible }] : []),
        { weight: 2, arbitrary: arbitraryOf(document, op.body).map((b): Body => ({ body: JSON.stringify(b), mutation: 'valid' })) },
        { weight: 2, arbitrary: mutatedBody(document, op.body) },
      )
    : fc.oneof(
        { weight: 9, arbitrary: fc.constant<Body>({ mutation: 'valid' }) },
        { weight: 1, arbitrary: fc.constant<Body>({ body: '['.repeat(10_000), mutation: 'body sent to an operation without one' }) },
      );
  return fc
    .record({
      ids,
      query: queryArbitrary(document, op),
      headers: headerArbitrary(op),
      credential: op.sessionOnly ? sessionCredential : credential,
      body,
    })
    .map((r) => ({
      operation: op,
      ids: r.ids,
      query: r.query.query,
      headers: r.headers,
      credential: op.secured ? r.credential : 'none',
      body: r.body.body,
      contentType: r.body.contentType,
      fills: r.body.fills ?? {},
      mutation: r.query.mutated ? `query ${r.query.query.map(([k, v]) => `${k}=${v}`).join('&')}` : r.body.mutation,
    }));
}
