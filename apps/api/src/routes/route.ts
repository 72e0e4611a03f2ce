import type { Request, RequestHandler, Response } from 'express';
import { loadOpenApiDocument, type operations } from '@sdx/contract';
import type { AppDeps } from '../deps';
import type { Access } from '../middleware/access';

/** An operationId of openapi.yaml: one route, in `routes/<operationId>.ts`. */
export type OperationId = keyof operations;

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

type Op<Id extends OperationId> = operations[Id];
type MediaBody<C> = C extends { 'application/json': infer B } ? B : C[keyof C];

/**
 * The request body of an operation as openapi.yaml declares it (its JSON body, or the one body
 * it declares in another media type); `undefined` for an operation without one, and possibly
 * `undefined` where the body is optional. The validator has checked it before a route runs.
 */
export type BodyOf<Id extends OperationId> =
  Op<Id> extends { requestBody: { content: infer C } }
    ? MediaBody<C>
    : Op<Id> extends { requestBody?: { content: infer C } }
      ? MediaBody<C> | undefined
      : undefined;

type Declared<P, K extends string> = P extends { [key in K]?: infer V }
  ? [V] extends [never]
    ? Record<never, never>
    : NonNullable<V>
  : Record<never, never>;

/**
 * The query of an operation as the validator leaves it: it coerces query parameters to their
 * declared type whatever its `coerceTypes` (that option is the body's), so a `type: boolean`
 * parameter arrives as true or false and an integer as a number; strings as sent, an enum with
 * its values.
 */
export type QueryOf<Id extends OperationId> = {
  [K in keyof Declared<Op<Id>['parameters'], 'query'>]?: QueryValue<Declared<Op<Id>['parameters'], 'query'>[K]>;
};

/** A query parameter's declared type as the validator leaves it (tuples: `boolean` is not split into `true | false`). */
type QueryValue<V> = [NonNullable<V>] extends [string]
  ? NonNullable<V>
  : [NonNullable<V>] extends [boolean]
    ? boolean
    : [NonNullable<V>] extends [number]
      ? number
      : string;

/** The path parameters of an operation (`{job_id}` ...), as strings. */
export type ParamsOf<Id extends OperationId> = { [K in keyof Declared<Op<Id>['parameters'], 'path'>]: string };

/** What a route's handler runs with: the app's dependencies, the request and response, its query and path parameters typed from openapi.yaml. */
export interface RouteContext<Id extends OperationId> {
  deps: AppDeps;
  req: Request;
  res: Response;
  query: QueryOf<Id>;
  params: ParamsOf<Id>;
}

/** A route's handler: it answers through `ctx.res`; a thrown error (or a rejected promise) goes to the one error renderer. */
export type Handler<Id extends OperationId, B = BodyOf<Id>> = (ctx: RouteContext<Id>, body: B) => unknown;

interface Common {
  /** Who may call it (middleware/access.ts); `public` routes skip authentication and the rate limit. */
  access: Access;
  /**
   * False for a route of the signed-in user that does not act on a workspace, so a workspace's
   * require_two_factor does not refuse it (middleware/auth.ts). Routes of `session` access never act on one.
   */
  actsOnWorkspace?: false;
}

/**
 * How a route is declared. `handler`: the body parsed as JSON (when the operation has one) and
 * validated against openapi.yaml, the route's access enforced, then the handler with the typed
 * body. `setup`: the same, with a handler made once per app (state it keeps between requests).
 * `rawBody`: the exact bytes sent (a Buffer, up to 1 MB), checked by the handler itself, not by
 * the validator (Stripe's signed webhook). `protocol`: a protocol whose own handlers read and
 * answer the request (the OAuth SDK's, the MCP transport), mounted by that protocol's router
 * (oauth/index.ts, mcp/index.ts) with its own body parsing and error bodies: the body they read
 * is still the one openapi.yaml declares (`BodyOf`), form-encoded or JSON for OAuth's token and
 * revocation endpoints.
 */
export type RouteSpec<Id extends OperationId> = Common &
  (
    | { handler: Handler<Id> }
    | { setup: (deps: AppDeps) => Handler<Id> }
    | { rawBody: true; handler: Handler<Id, Buffer> }
    | { protocol: 'oauth' | 'mcp'; handlers: (deps: AppDeps) => RequestHandler[] }
  );

/** A declared route: what app.ts mounts. */
export interface Route {
  operationId: OperationId;
  method: Method;
  /** The Express form of the path of openapi.yaml (`/v1/jobs/:job_id`). */
  path: string;
  access: Access;
  actsOnWorkspace: boolean;
  /** How the request is read: `json` (the /v1 chain: JSON body, validator), `raw` (bytes, the route checks them), or by a protocol's router. */
  reads: 'json' | 'raw' | 'oauth' | 'mcp';
  /** The route's own handlers, made once per app. */
  handlers(deps: AppDeps): RequestHandler[];
}

const ACCESS: ReadonlySet<string> = new Set<Access>(['public', 'session', 'viewer', 'member', 'admin', 'owner']);
const METHODS: readonly Method[] = ['get', 'post', 'put', 'patch', 'delete'];

let operationsByIdCache: Map<string, { method: Method; path: string }> | null = null;

/** Every operation of openapi.yaml by operationId: its method and its path in Express form. Read once. */
export function contractOperations(): ReadonlyMap<string, { method: Method; path: string }> {
  if (operationsByIdCache) return operationsByIdCache;
  const found = new Map<string, { method: Method; path: string }>();
  for (const [template, item] of Object.entries(loadOpenApiDocument().paths)) {
    for (const method of METHODS) {
      const id = (item as Record<string, { operationId?: string } | undefined>)[method]?.operationId;
      if (id) found.set(id, { method, path: template.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1') });
    }
  }
  operationsByIdCache = found;
  return found;
}

/** The request's context for a handler; query and path parameters as the validator let them through. */
function contextOf<Id extends OperationId>(deps: AppDeps, req: Request, res: Response): RouteContext<Id> {
  return { deps, req, res, query: req.query as QueryOf<Id>, params: req.params as ParamsOf<Id> };
}

/**
 * The one place a request's body is handed to a route: as the validator let it through against
 * the operation of openapi.yaml (or the raw bytes, for a `rawBody` route), hence its type.
 */
function serve<Id extends OperationId, B>(deps: AppDeps, handler: Handler<Id, B>): RequestHandler {
  return (req, res) => {
    const validated: unknown = req.body;
    return handler(contextOf<Id>(deps, req, res), validated as B);
  };
}

/**
 * Declares the route of one operation of openapi.yaml: its method and path are the contract's
 * (found by operationId, so a route cannot drift from it), its access, and its handler with the
 * body typed from the generated types (`operations[operationId]['requestBody']`). An operationId
 * the contract does not have, or a declaration without a valid access, throws when the route's
 * file loads: the app cannot start with it.
 */
export function route<Id extends OperationId>(operationId: Id, spec: Common & { rawBody: true; handler: Handler<Id, Buffer> }): Route;
export function route<Id extends OperationId>(
  operationId: Id,
  spec: Common & { protocol: 'oauth' | 'mcp'; handlers: (deps: AppDeps) => RequestHandler[] },
): Route;
export function route<Id extends OperationId>(operationId: Id, spec: Common & { setup: (deps: AppDeps) => Handler<Id> }): Route;
export function route<Id extends OperationId>(operationId: Id, spec: Common & { handler: Handler<Id> }): Route;
export function route<Id extends OperationId>(operationId: Id, spec: RouteSpec<Id>): Route {
  const operation = contractOperations().get(operationId);
  if (!operation) throw new Error(`route ${String(operationId)}: not an operation of openapi.yaml`);
  const label = `${operation.method.toUpperCase()} ${operation.path}`;
  if (!ACCESS.has((spec as { access?: string }).access ?? ''))
    throw new Error(`route ${label} (${String(operationId)}) declares no access`);
  const base = {
    operationId,
    ...operation,
    access: spec.access,
    actsOnWorkspace: spec.access !== 'session' && spec.actsOnWorkspace !== false,
  };
  if ('protocol' in spec) return { ...base, reads: spec.protocol, handlers: spec.handlers };
  if ('rawBody' in spec) return { ...base, reads: 'raw', handlers: (deps) => [serve(deps, spec.handler)] };
  if ('setup' in spec) return { ...base, reads: 'json', handlers: (deps) => [serve(deps, spec.setup(deps))] };
  return { ...base, reads: 'json', handlers: (deps) => [serve(deps, spec.handler)] };
}

/** `METHOD path`, as logs, errors and the security sweep name a route. */
export const labelOf = (r: { method: string; path: string }): string => `${r.method.toUpperCase()} ${r.path}`;
