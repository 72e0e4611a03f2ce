import { type Core, unwrap } from '../core';
import type { LoginRequest, RecoveryCodes, Session, SignedIn, SignUpRequest, TwoFactorSetup, VerificationRequired } from '../types';

/**
 * Browser users' sessions. After `signUp` or `logIn` the client is signed in: outside browsers
 * it keeps the session cookie itself, and it sends the session's CSRF token on writes. A client
 * made with an API key uses the key instead.
 */
export class Auth {
  /** Two-factor sign-in (TOTP) of the signed-in user. */
  readonly twoFactor: TwoFactor;

  constructor(private readonly core: Core) {
    this.twoFactor = new TwoFactor(core);
  }

  /**
   * `POST /v1/auth/signup`: the user, their personal workspace, and a session; or, where the
   * service verifies emails, `{verification_required: true}` and no session until the mailed
   * link is followed (`verifyEmail`).
   */
  async signUp(body: SignUpRequest): Promise<SignedIn | VerificationRequired> {
    const { data } = await unwrap(this.core.http.POST('/v1/auth/signup', { body }));
    if ('csrf_token' in data) this.core.credentials.csrfToken = data.csrf_token;
    return data;
  }

  /**
   * `POST /v1/auth/login`. With two-factor sign-in on, a call without `otp` is refused 401
   * `otp_required`: call again with `otp`, a current code of the authenticator app or an unused
   * recovery code (a wrong one is 401 `invalid_otp`). An email not yet verified: 403
   * `email_not_verified`.
   */
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

  /**
   * `POST /v1/auth/password`: every other session of the user ends. `revokeApiKeys: true` also
   * revokes every API key the user created, in every workspace (after a stolen password).
   */
  async changePassword(body: { current_password: string; new_password: string; revokeApiKeys?: boolean }): Promise<void> {
    const { revokeApiKeys = false, ...passwords } = body;
    await unwrap(this.core.http.POST('/v1/auth/password', { body: { ...passwords, revoke_api_keys: revokeApiKeys } }));
  }

  /**
   * `POST /v1/auth/verify`: redeems the token of a verification mail (`…/console/verify?token=…`)
   * with the password given at the sign-up that sent it, and signs in. A wrong password: 401
   * `invalid_credentials` (the link stays usable). A used, expired or unknown token: 410
   * `verification_invalid`.
   */
  async verifyEmail(token: string, password: string): Promise<SignedIn> {
    const { data } = await unwrap(this.core.http.POST('/v1/auth/verify', { body: { token, password } }));
    this.core.credentials.csrfToken = data.csrf_token;
    return data;
  }

  /** `POST /v1/auth/verify/resend`: mails the verification link again, if the email waits for one (the answer is the same either way). */
  async resendVerification(email: string): Promise<void> {
    await unwrap(this.core.http.POST('/v1/auth/verify/resend', { body: { email } }));
  }

  /** `POST /v1/auth/password-reset`: mails a reset link if an account has the email (the answer is the same either way). 503 `mail_unavailable` where the service sends no mail. */
  async requestPasswordReset(email: string): Promise<void> {
    await unwrap(this.core.http.POST('/v1/auth/password-reset', { body: { email } }));
  }

  /**
   * `POST /v1/auth/password-reset/confirm`: sets the new password with a reset mail's token; every
   * session of the user ends and every OAuth grant they gave is revoked. `revokeKeys: true` also
   * revokes every API key they created. 410 `reset_token_invalid`.
   */
  async confirmPasswordReset(token: string, newPassword: string, options: { revokeKeys?: boolean } = {}): Promise<void> {
    await unwrap(
      this.core.http.POST('/v1/auth/password-reset/confirm', {
        body: { token, new_password: newPassword, revoke_keys: options.revokeKeys ?? false },
      }),
    );
  }
}

/** `/v1/auth/2fa/*`: turning two-factor sign-in on (setup, then enable with a code) and off. */
export class TwoFactor {
  constructor(private readonly core: Core) {}

  /** `POST /v1/auth/2fa/setup`: a new secret (base32, and as an `otpauth://` URL for a QR code), not active until `enable`. */
  async setUp(): Promise<TwoFactorSetup> {
    const { data } = await unwrap(this.core.http.POST('/v1/auth/2fa/setup'));
    return data;
  }

  /** `POST /v1/auth/2fa/enable`: turns it on with a current code of the new secret; the ten recovery codes are in this answer only. */
  async enable(code: string): Promise<RecoveryCodes> {
    const { data } = await unwrap(this.core.http.POST('/v1/auth/2fa/enable', { body: { code } }));
    return data;
  }

  /** `POST /v1/auth/2fa/disable`: turns it off with the password and a current code (or a recovery code). */
  async disable(body: { password: string; code: string }): Promise<void> {
    await unwrap(this.core.http.POST('/v1/auth/2fa/disable', { body }));
  }
}
