import path from 'node:path';
import { ingressProblems, ingressRoutes, render, type Resource } from '../../../scripts/validate-k8s';

/**
 * The shipped Ingress (infra/k8s/ingress.yaml, extensions-3.md 1): `GET /metrics` (and the
 * queue dashboard) are not routed from the internet, while every public surface is;
 * `npm run validate:k8s` refuses a manifest that would route them.
 */
const shipped = render(path.resolve(__dirname, '../../../infra/k8s')).filter((r) => r.kind === 'Ingress');

function ingress(paths: Array<{ path: string; pathType: string }>, defaultBackend = false): Resource {
  const backend = { service: { name: 'api', port: { name: 'http' } } };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: 'api' },
    spec: { ...(defaultBackend ? { defaultBackend: backend } : {}), rules: [{ http: { paths: paths.map((p) => ({ ...p, backend })) } }] },
  };
}

describe('the shipped Ingress', () => {
  it('exists, and routes no operator path: /metrics, its variants and /admin/queues fall through to the controller', () => {
    expect(shipped).toHaveLength(1);
    for (const p of ['/metrics', '/metrics/', '/admin/queues', '/admin/queues/api/queues', '/healthz', '/readyz'])
      expect([p, ingressRoutes(shipped, p)]).toEqual([p, []]);
    expect(ingressProblems(shipped)).toEqual([]);
  });

  it('routes every public surface', () => {
    for (const p of [
      '/v1/jobs',
      '/v1/billing/stripe/webhook',
      '/mcp',
      '/oauth/authorize',
      '/.well-known/oauth-authorization-server',
      '/console/',
      '/console/billing',
      '/docs',
      '/openapi.yaml',
      '/',
    ]) {
      expect([p, ingressRoutes(shipped, p).length]).toEqual([p, 1]);
    }
    // Prefix matching is by path element: /v1 does not route /v1x, nor /mcp route /mcpanel.
    expect(ingressRoutes(shipped, '/v1x')).toEqual([]);
  });

  it('validate:k8s refuses an Ingress that routes /metrics: a catch-all prefix, a default backend, or the path itself', () => {
    for (const bad of [
      ingress([{ path: '/', pathType: 'Prefix' }]),
      ingress([{ path: '/v1', pathType: 'Prefix' }], true),
      ingress([{ path: '/metrics', pathType: 'Exact' }]),
    ]) {
      expect(ingressProblems([bad])).toContain("Ingress: routes /metrics, which only the cluster's operators may reach");
    }
    expect(ingressProblems([])).toEqual(['Ingress: none ships; the API needs one that routes its public paths only']);
  });
});
