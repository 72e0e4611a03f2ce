import { DOCS_CSP, docsPageAsset, sendReferenceAsset } from './reference';
import { route } from './route';

/**
 * GET /docs — the API reference page, which loads nothing from any other host (its CSP says
 * so). Made once per process; revalidated by ETag (304), written from memory.
 */
export const getDocs = route('getDocs', {
  access: 'public',
  handler: ({ req, res }) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    sendReferenceAsset(req, res, docsPageAsset(), 'text/html; charset=utf-8', 'no-cache');
  },
});
