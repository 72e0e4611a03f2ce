import { readFileSync } from 'node:fs';
import path from 'node:path';
import { collectProcessMetrics, registry } from '../src';

/** The provisioned Grafana dashboard and the Prometheus config read only series that exist. */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const HISTOGRAM_SUFFIX = /_(bucket|count|sum)$/;

async function registered(): Promise<Set<string>> {
  collectProcessMetrics();
  return new Set((await registry.getMetricsAsJSON()).map((metric) => metric.name));
}

describe('infra/grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'infra/grafana/dashboards/sdx-service.json'), 'utf8')) as {
    uid: string;
    panels: Array<{ type: string; targets?: Array<{ expr: string; datasource: { uid: string } }> }>;
  };
  const exprs = dashboard.panels.flatMap((panel) => panel.targets ?? []);

  it('queries only series the processes expose', async () => {
    const names = await registered();
    const used = new Set(exprs.flatMap((t) => t.expr.match(/\b(sdx|process|nodejs)_[a-z0-9_]+/g) ?? []));
    expect(used.size).toBeGreaterThan(10);
    const unknown = [...used].filter((name) => !names.has(name) && !names.has(name.replace(HISTOGRAM_SUFFIX, '')));
    expect(unknown).toEqual([]);
  });

  it('shows every series of the service', async () => {
    const names = [...(await registered())].filter((name) => name.startsWith('sdx_'));
    const text = exprs.map((t) => t.expr).join('\n');
    expect(names.filter((name) => !text.includes(name))).toEqual([]);
  });

  it('reads the provisioned Prometheus data source', () => {
    const datasources = readFileSync(path.join(ROOT, 'infra/grafana/provisioning/datasources/prometheus.yml'), 'utf8');
    const uid = /uid: (\S+)/.exec(datasources)?.[1];
    expect(uid).toBeDefined();
    expect(new Set(exprs.map((t) => t.datasource.uid))).toEqual(new Set([uid]));
  });
});
