import { randomBytes } from 'node:crypto';
import type request from 'supertest';
import type { TestStack } from './stack';

/** A signed-in user of a test: the cookie and CSRF token to send, and what sign-up made. */
export interface SessionUser {
  userId: string;
  email: string;
  password: string;
  personalWorkspaceId: string;
  cookie: string;
  csrf: string;
  /** Headers of a cookie-authenticated read (optionally in a workspace). */
  read(workspaceId?: string): Record<string, string>;
  /** Headers of a cookie-authenticated write: the cookie and X-CSRF-Token. */
  write(workspaceId?: string): Record<string, string>;
}

/** The `name=value` of a cookie set by a response. */
export function cookieFrom(res: request.Response, name = 'sdx_session'): string | null {
  const raw = res.headers['set-cookie'] as unknown;
  const all = Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : [];
  for (const line of all) {
    const pair = line.split(';')[0];
    if (pair.startsWith(`${name}=`) && pair.length > name.length + 1) return pair;
  }
  return null;
}

function sessionUser(res: request.Response, email: string, password: string): SessionUser {
  const cookie = cookieFrom(res);
  if (!cookie) throw new Error(`no session cookie (status ${res.status}: ${JSON.stringify(res.body)})`);
  const body = res.body as { csrf_token: string; workspaces: Array<{ id: string; kind: string }>; user: { id: string } };
  const csrf = body.csrf_token;
  const personal = body.workspaces.find((w) => w.kind === 'personal');
  const withWorkspace = (headers: Record<string, string>, workspaceId?: string) =>
    workspaceId ? { ...headers, 'X-Workspace-ID': workspaceId } : headers;
  return {
    userId: body.user.id,
    email,
    password,
    personalWorkspaceId: personal?.id ?? '',
    cookie,
    csrf,
    read: (workspaceId) => withWorkspace({ Cookie: cookie }, workspaceId),
    write: (workspaceId) => withWorkspace({ Cookie: cookie, 'X-CSRF-Token': csrf }, workspaceId),
  };
}

let seq = 0;

/** Signs a new user up through POST /v1/auth/signup. */
export async function signUpUser(
  stack: TestStack,
  options: { email?: string; password?: string; displayName?: string } = {},
): Promise<SessionUser> {
  const email = options.email ?? `user${++seq}.${randomBytes(3).toString('hex')}@example.com`;
  const password = options.password ?? `pw-${randomBytes(8).toString('hex')}`;
  const res = await stack.api.post('/v1/auth/signup', { body: { email, password, display_name: options.displayName ?? null } });
  if (res.status !== 201) throw new Error(`sign-up answered ${res.status}: ${JSON.stringify(res.body)}`);
  return sessionUser(res, email, password);
}

/** Signs in through POST /v1/auth/login: a new session of the user. */
export async function logInUser(stack: TestStack, email: string, password: string): Promise<SessionUser> {
  const res = await stack.api.post('/v1/auth/login', { body: { email, password } });
  if (res.status !== 200) throw new Error(`login answered ${res.status}: ${JSON.stringify(res.body)}`);
  return sessionUser(res, email, password);
}
