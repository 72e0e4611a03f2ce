/**
 * The token of the link this tab was opened with (`/console/verify?token=…`, `/reset?token=…`,
 * `/invitations/accept?token=…`). index.html's boot script (tools/boot.ts) takes it out of the
 * address bar before anything loads and keeps it in the tab's sessionStorage under the page's
 * path, so no request, history entry or Referer carries it; the page reads it here, also after
 * signing in or up on the way (`?next=` then holds the path alone).
 */
const PREFIX = 'sdx.link-token:';

declare global {
  interface Window {
    __sdxLinkToken?: { path: string; token: string };
  }
}

/** The absolute path of a console route (`/verify` → `/console/verify`). */
const full = (route: string) => `/console${route}`;

/** The token kept for the console route, or '' (a token still in the address bar is taken too: a page opened without the boot script). */
export function linkToken(route: string): string {
  const path = full(route);
  try {
    const kept = sessionStorage.getItem(PREFIX + path);
    if (kept) return kept;
  } catch {
    // Storage off: the boot script's copy for this load.
  }
  if (window.__sdxLinkToken?.path === path) return window.__sdxLinkToken.token;
  return window.location.pathname === path ? (new URLSearchParams(window.location.search).get('token') ?? '') : '';
}

/** Forgets the route's token once its link was used (or found dead). */
export function forgetLinkToken(route: string): void {
  const path = full(route);
  try {
    sessionStorage.removeItem(PREFIX + path);
  } catch {
    // Nothing kept.
  }
  if (window.__sdxLinkToken?.path === path) delete window.__sdxLinkToken;
}
