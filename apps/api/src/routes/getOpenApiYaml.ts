import { contractYaml } from './reference';
import { route } from './route';

/** GET /openapi.yaml — the contract as written. */
export const getOpenApiYaml = route('getOpenApiYaml', {
  access: 'public',
  handler: ({ res }) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/yaml; charset=utf-8').send(contractYaml());
  },
});
