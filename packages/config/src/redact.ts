/**
 * Credentials are redacted wherever a request can carry them: any header whose name looks like
 * a credential (Authorization, Proxy-Authorization, X-API-Key, Cookie, *-Token, ...) and any
 * query parameter named like one (?api_key=, ?token=, ?access_token=, ...). Names are matched
 * loosely on purpose: logging "[Redacted]" for a harmless header costs nothing, logging a key
 * once is a leak.
 */
const CREDENTIAL_NAME = /auth|token|secret|passw|api[-_]?key|^key$|cookie|session|credential|signature|^sig$/i;

export const REDACTED = '[Redacted]';

export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/** A copy of `headers` with every credential-like header's value replaced. */
export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = value !== undefined && isCredentialName(name) ? REDACTED : value;
  return out;
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
      return isCredentialName(name) ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, q)}?${redacted}${hash < 0 ? '' : url.slice(hash)}`;
}
