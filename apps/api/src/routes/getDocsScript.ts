import { docsScriptAsset, sendReferenceAsset } from './reference';
import { route } from './route';

/**
 * GET /docs/redoc.standalone.js — the renderer of the reference page, from npm's redoc. The page
 * names it with `v`, its version: that address never changes content, so it is cacheable for
 * good (immutable); without `v`, or with another one, for a day.
 */
export const getDocsScript = route('getDocsScript', {
  access: 'public',
  handler: ({ req, res }) => {
    const asset = docsScriptAsset();
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const cacheControl = req.query.v === asset.version ? 'public, max-age=31536000, immutable' : 'public, max-age=86400';
    sendReferenceAsset(req, res, asset, 'application/javascript; charset=utf-8', cacheControl);
  },
});
