import { randomBytes } from 'node:crypto';
import type { Executor, OAuthClientRow } from '@sdx/db';

/**
 * OAuth clients registered by RFC 7591 dynamic registration (extensions-2.md 3): public
 * clients only (no secret; PKCE protects the code), each with the redirect URIs it may be sent
 * to. A redirect URI is https, or http on a loopback host (RFC 8252 7.3: 127.0.0.1, [::1] or
 * localhost), without a fragment; anything else is refused at registration.
 */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost']);
export const MAX_REDIRECT_URIS = 10;

/** Why a redirect URI is refused, or null when it is acceptable. */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > 2000) return 'is longer than 2000 characters';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.hash || uri.includes('#')) return 'has a fragment';
  if (url.username || url.password) return 'carries credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return 'is neither https nor http on a loopback host (127.0.0.1, [::1], localhost)';
}

/**
 * Whether a requested redirect URI is one the client registered: the same string, or, for a
 * loopback URI, the same but for the port (RFC 8252 7.3: native clients listen on a port the
 * system gives them). The SDK's authorization handler applies the same rule.
 */
export function redirectUriMatches(requested: string, registered: string): boolean {
  if (requested === registered) return true;
  let req: URL;
  let reg: URL;
  try {
    req = new URL(requested);
    reg = new URL(registered);
  } catch {
    return false;
  }
  if (!LOOPBACK_HOSTS.has(req.hostname) || req.hostname !== reg.hostname) return false;
  return req.protocol === reg.protocol && req.pathname === reg.pathname && req.search === reg.search;
}

export interface OAuthClientRegistration {
  client_name: string | null;
  redirect_uris: string[];
  /** The rest of the client's metadata as registered (RFC 7591 2), kept to answer with it. */
  metadata: Record<string, unknown>;
}

/**
 * A client's registration as RFC 7591 3.2.1 answers it: its metadata and its ID (named by its
 * ID when it gave no name). `client_id_issued_at` (optional in the RFC) is left out: the API's
 * `_at` fields are date-times, and the RFC's is a number.
 */
export type RegisteredClient = Record<string, unknown> & {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: 'none';
  grant_types: string[];
  response_types: string[];
};

export function renderClient(row: OAuthClientRow): RegisteredClient {
  const metadata = (row.metadata ?? {}) as Record<string, unknown>;
  return {
    ...metadata,
    client_name: row.client_name ?? row.id,
    client_id: row.id,
    redirect_uris: row.redirect_uris,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  };
}

/**
 * Registers a public client (the redirect URIs checked by the caller with redirectUriProblem).
 * Its ID is `oac_` and 32 hex characters: public, but not guessable.
 */
export async function createOAuthClient(db: Executor, registration: OAuthClientRegistration): Promise<RegisteredClient> {
  const row = await db
    .insertInto('oauth_clients')
    .values({
      id: `oac_${randomBytes(16).toString('hex')}`,
      client_name: registration.client_name,
      redirect_uris: registration.redirect_uris,
      metadata: JSON.stringify(registration.metadata),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return renderClient(row);
}

/** A registered client, or null. */
export async function findOAuthClient(db: Executor, clientId: string): Promise<OAuthClientRow | null> {
  if (!/^[\x21-\x7e]{1,100}$/.test(clientId)) return null;
  return (await db.selectFrom('oauth_clients').selectAll().where('id', '=', clientId).executeTakeFirst()) ?? null;
}
