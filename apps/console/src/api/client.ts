import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from '@sdx/contract';

/**
 * The console's only way to the service: a client typed from openapi.yaml (openapi-fetch over
 * the generated `paths`). The session cookie travels by itself (same origin); every write
 * carries the session's CSRF token, and every call names the chosen workspace.
 */
/** Request bodies by name: openapi.yaml keeps them under requestBodies, so their defaults stay optional. */
type RequestBodies = { [K in keyof components['requestBodies']]: components['requestBodies'][K]['content']['application/json'] };
export type Schemas = components['schemas'] & RequestBodies;
export type Job = Schemas['JobResponse'];
export type Batch = Schemas['BatchResponse'];
export type Schedule = Schemas['ScheduleResponse'];
export type ScheduleRun = Schemas['ScheduleRun'];
export type Workspace = Schemas['Workspace'];
export type Role = 'viewer' | 'member' | 'admin' | 'owner';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
const credentials = { csrf: null as string | null, workspaceId: null as string | null };

export function setCsrfToken(token: string | null): void {
  credentials.csrf = token;
}
export function setWorkspaceId(id: string | null): void {
  credentials.workspaceId = id;
}
export function currentWorkspaceId(): string | null {
  return credentials.workspaceId;
}

/** Headers every request of the console carries, for calls made outside the typed client (downloads, event streams). */
export function sessionHeaders(method = 'GET'): Record<string, string> {
  const headers: Record<string, string> = {};
  if (credentials.workspaceId) headers['X-Workspace-ID'] = credentials.workspaceId;
  if (credentials.csrf && !SAFE.has(method)) headers['X-CSRF-Token'] = credentials.csrf;
  return headers;
}

/**
 * Calls about the user rather than a workspace (/v1/auth/…: the session, the password, two-factor
 * sign-in) name no workspace: a workspace that requires two-factor sign-in refuses a user without
 * it (403 two_factor_required), and the way to turn it on must stay open to them.
 */
const USER_CALLS = '/v1/auth/';

const sessionMiddleware: Middleware = {
  onRequest({ request }) {
    const userCall = new URL(request.url, location.origin).pathname.startsWith(USER_CALLS);
    for (const [name, value] of Object.entries(sessionHeaders(request.method))) {
      if (userCall && name === 'X-Workspace-ID') continue;
      if (!request.headers.has(name)) request.headers.set(name, value);
    }
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use(sessionMiddleware);

/** One issue of a 422 validation body. */
export interface FieldIssue {
  field: string;
  message: string;
}

/** An error of the service, or of the way to it, as the console shows it: in words, with its request ID. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
    readonly issues: FieldIssue[] = [],
    readonly detail: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiProblem';
  }

  static async fromResponse(response: Response, body?: unknown): Promise<ApiProblem> {
    const requestId = response.headers.get('X-Request-ID');
    if (body === undefined) body = await response.json().catch(() => undefined);
    const detail = (body as { detail?: unknown } | undefined)?.detail;
    if (Array.isArray(detail)) {
      const issues = detail.map((item: { loc?: Array<string | number>; msg?: string }) => ({
        field: (item.loc ?? []).filter((part, i) => !(i === 0 && ['body', 'query', 'path', 'header'].includes(String(part)))).join('.'),
        message: item.msg ?? 'is not valid',
      }));
      return new ApiProblem(response.status, 'validation_error', 'Some fields are not valid.', requestId, issues);
    }
    if (detail && typeof detail === 'object') {
      const d = detail as Record<string, unknown>;
      return new ApiProblem(
        response.status,
        typeof d.error === 'string' ? d.error : 'error',
        typeof d.message === 'string' ? d.message : response.statusText,
        requestId,
        [],
        d,
      );
    }
    return new ApiProblem(response.status, 'http_error', `The service answered ${response.status} ${response.statusText}.`, requestId);
  }

  static network(error: unknown): ApiProblem {
    return new ApiProblem(
      0,
      'network_error',
      `The service could not be reached (${error instanceof Error ? error.message : String(error)}).`,
      null,
    );
  }
}

type Call<T> = Promise<{ data?: T; error?: unknown; response: Response }>;

/** The answer of an openapi-fetch call when it succeeded; its error thrown as an ApiProblem otherwise. */
async function settle<T>(call: Call<T>): Promise<{ data: T; response: Response }> {
  let result: Awaited<Call<T>>;
  try {
    result = await call;
  } catch (error) {
    throw ApiProblem.network(error);
  }
  if (!result.response.ok) throw await ApiProblem.fromResponse(result.response, result.error);
  return { data: result.data as T, response: result.response };
}

/** The data of an openapi-fetch call, or its error thrown as an ApiProblem. */
export async function unwrap<T>(call: Call<T>): Promise<T> {
  return (await settle(call)).data;
}

/** The URL of the next page a list response names in its Link header (rel="next"), if any. */
export function nextCursor(response: Response): string | null {
  const link = response.headers.get('Link');
  if (!link) return null;
  for (const part of link.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (match) return new URL(match[1], location.origin).searchParams.get('starting_after');
  }
  return null;
}

/** A list call that also reads the next page's cursor from the Link header. */
export async function unwrapPage<T>(call: Call<T>): Promise<{ items: T; next: string | null }> {
  const { data, response } = await settle(call);
  return { items: data, next: nextCursor(response) };
}

/**
 * Downloads a file the API answers (an export) with the session's headers, and hands it to the
 * browser as a download. A link cannot carry X-Workspace-ID, so the console fetches it.
 */
export async function download(path: string, fallbackName: string): Promise<void> {
  let response: Response;
  try {
    response = await fetch(path, { headers: sessionHeaders(), credentials: 'same-origin' });
  } catch (error) {
    throw ApiProblem.network(error);
  }
  if (!response.ok) throw await ApiProblem.fromResponse(response);
  const disposition = response.headers.get('Content-Disposition') ?? '';
  const name = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
