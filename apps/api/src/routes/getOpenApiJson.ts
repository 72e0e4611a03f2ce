import { contractJsonAsset, sendReferenceAsset } from './reference';
import { route } from './route';

/** GET /openapi.json — the contract as JSON, for client generators and the reference page; made once, revalidated by ETag. */
export const getOpenApiJson = route('getOpenApiJson', {
  access: 'public',
  handler: ({ req, res }) => {
    sendReferenceAsset(req, res, contractJsonAsset(), 'application/json; charset=utf-8', 'no-cache');
  },
});
