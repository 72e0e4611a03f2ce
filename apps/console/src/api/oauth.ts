import { api, type Schemas, unwrap } from './client';

export type ConsentRequest = Schemas['OAuthConsentRequest'];

/**
 * POST /v1/oauth/consent: the signed-in user grants the client a key of `workspace_id` with
 * `role`. The answer names where to send the browser: the client's redirect URI, carrying the
 * authorization code and the client's state. The call names the chosen workspace, so a refusal
 * (its two-factor rule) is about the workspace being granted, not the console's current one.
 */
export function grantConsent(body: ConsentRequest): Promise<Schemas['OAuthConsentResponse']> {
  return unwrap(api.POST('/v1/oauth/consent', { params: { header: { 'X-Workspace-ID': body.workspace_id } }, body }));
}
