/**
 * Credentials are redacted wherever a request can carry them: any header whose name looks like
 * a credential (Authorization, Proxy-Authorization, X-API-Key, Cookie, *-Token, ...), any query
 * parameter named like one (?api_key=, ?token=, ?access_token=, ...), and the same parameters in
 * every URL a header carries (Referer above all: the console's follow-up requests name the page
 * they came from, such as `/console/verify?token=…`; X-Original-URL, X-Forwarded-Uri, ...) or a
 * parameter carries (`?next=/invitations/accept?token=…`). Names are matched loosely on purpose:
 * logging "[Redacted]" for a harmless header costs nothing, logging a key once is a leak.
 */
const CREDENTIAL_NAME = /auth|token|secret|passw|api[-_]?key|^key$|cookie|session|credential|signature|^sig$/i;

export const REDACTED = '[Redacted]';

export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/** A header's value with the credentials of any URL in it redacted (a value without a query is kept as it is). */
function redactValue(value: string): string {
  return value.includes('?') ? redactUrl(value) : value;
}

/** A copy of `headers` with every credential-like header's value replaced, and the credentials of the URLs the others carry (Referer, ...) redacted. */
export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) out[name] = value;
    else if (isCredentialName(name)) out[name] = REDACTED;
    else out[name] = Array.isArray(value) ? value.map(redactValue) : redactValue(value);
  }
  return out;
}

/** Whether a parameter's value is itself a URL with a credential in its query (`?next=/invitations/accept?token=…`). */
function carriesCredential(rawValue: string): boolean {
  let value = rawValue;
  try {
    value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
  } catch {
    // Judge it as sent.
  }
  return value.includes('?') && redactUrl(value) !== value;
}

/** `url` (a request target such as "/v1/jobs?api_key=...") with credential-like query values replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash < 0 ? undefined : hash);
  const redacted = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        // Not valid percent-encoding: judge the name as sent.
      }
      return isCredentialName(name) || (eq >= 0 && carriesCredential(pair.slice(eq + 1))) ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, q)}?${redacted}${hash < 0 ? '' : url.slice(hash)}`;
}
