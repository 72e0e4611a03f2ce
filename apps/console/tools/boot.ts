/**
 * The console's first and only script in index.html, inline in the head (extensions-3.md 1:
 * tokens in URLs are never logged). A link with a token (`/console/verify?token=…`, `/reset`,
 * `/invitations/accept`) is opened as is, but before anything else loads, this takes the token
 * out of the address bar (`history.replaceState`) and keeps it for the page in the tab's
 * sessionStorage under `sdx.link-token:{pathname}` (and in `window.__sdxLinkToken`, where
 * storage is off); src/link-token.ts reads it. Only then does it write the tags of the styles
 * and scripts, so no request of the page, nor its Referer, carries the token. The page names no
 * asset of its own: the browser's preload scanner has nothing to fetch ahead of this script.
 * The API's Content-Security-Policy lets this script run by its SHA-256 (middleware/console.ts).
 */
const STRIP = [
  '(function(){',
  'try{',
  'var u=new URL(location.href),t=u.searchParams.get("token");',
  'if(t!==null){',
  'u.searchParams.delete("token");',
  'window.__sdxLinkToken={path:u.pathname,token:t};',
  'try{sessionStorage.setItem("sdx.link-token:"+u.pathname,t)}catch(e){}',
  'history.replaceState(history.state,"",u.pathname+u.search+u.hash)',
  '}',
  '}catch(e){}',
].join('');

/** The inline script: the token taken out, then the page's tags written where the script stands. */
export function bootScript(assetTags: string[]): string {
  // `<\/`: a `</script>` inside the string would end the inline script where it stands.
  return `${STRIP}document.write(${JSON.stringify(assetTags.join('')).replace(/<\//g, '<\\/')})})();`;
}
