import { type Core, unwrap } from '../core';
import type { LoginRequest, Session, SignedIn, SignUpRequest } from '../types';

/**
 * Browser users' sessions. After `signUp` or `logIn` the client is signed in: outside browsers
 * it keeps the session cookie itself, and it sends the session's CSRF token on writes. A client
 * made with an API key uses the key instead.
 */
export class Auth {
  constructor(private readonly core: Core) {}

  /** `POST /v1/auth/signup`: the user, their personal workspace, and a session. */
  async signUp(body: SignUpRequest): Promise<SignedIn> {
    const { data } = await unwrap(this.core.http.POST('/v1/auth/signup', { body }));
    this.core.credentials.csrfToken = data.csrf_token;
    return data;
  }

  /** `POST /v1/auth/login`. */
  async logIn(body: LoginRequest): Promise<SignedIn> {
    const { data } = await unwrap(this.core.http.POST('/v1/auth/login', { body }));
    this.core.credentials.csrfToken = data.csrf_token;
    return data;
  }

  /** `GET /v1/auth/session`: the signed-in user, their workspaces and the CSRF token. */
  async session(): Promise<Session> {
    const { data } = await unwrap(this.core.http.GET('/v1/auth/session'));
    this.core.credentials.csrfToken = data.csrf_token;
    return data;
  }

  /** `POST /v1/auth/logout`: ends the session. */
  async logOut(): Promise<void> {
    await unwrap(this.core.http.POST('/v1/auth/logout'));
    this.core.credentials.csrfToken = undefined;
    this.core.credentials.sessionCookie = undefined;
  }

  /** `POST /v1/auth/password`: every other session of the user ends. */
  async changePassword(body: { current_password: string; new_password: string }): Promise<void> {
    await unwrap(this.core.http.POST('/v1/auth/password', { body }));
  }
}
