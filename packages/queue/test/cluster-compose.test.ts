import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { parseRedisClusterNodes } from '@sdx/config';

/**
 * The `cluster` profile of docker-compose.yml (checked here, as no compose binary may be at
 * hand): six Redis nodes in cluster mode, a one-shot service joining them with one replica per
 * master, every app service waiting for it when the profile is on (and not otherwise), and
 * REDIS_CLUSTER_NODES passed to the services, with the node list the file's header gives.
 */
interface Service {
  image?: string;
  profiles?: string[];
  command?: string[] | string;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string; required?: boolean }>;
}

const text = readFileSync(path.resolve(__dirname, '../../../docker-compose.yml'), 'utf8');
const compose = parse(text, { merge: true }) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const nodes = [1, 2, 3, 4, 5, 6].map((n) => `redis-node-${n}`);

it('has six cluster-enabled Redis nodes and a one-shot creator, in the cluster profile only', () => {
  for (const name of nodes) {
    const node = compose.services[name];
    expect(node.profiles).toEqual(['cluster']);
    expect(node.command).toEqual(expect.arrayContaining(['--cluster-enabled', 'yes', '--maxmemory-policy', 'noeviction']));
    expect(name in compose.volumes).toBe(true);
  }
  const init = compose.services['redis-cluster-init'];
  expect(init.profiles).toEqual(['cluster']);
  expect(Object.keys(init.depends_on ?? {}).sort()).toEqual(nodes);
  const script = (init.command as string[]).join('\n');
  expect(script).toContain('--cluster create');
  expect(script).toContain('--cluster-replicas 1');
  expect(script).toContain('--cluster-yes');
  // Services outside the profile keep running without it.
  expect(compose.services.redis.profiles).toBeUndefined();
});

it('passes REDIS_CLUSTER_NODES to every app service, which names no service of a profile that may be off', () => {
  for (const app of ['api', 'worker', 'scheduler', 'migrate']) {
    expect(compose.services[app].environment!.REDIS_CLUSTER_NODES).toBe('${REDIS_CLUSTER_NODES:-}');
  }
  // A dependency on a service of a profile that is off is an error to docker-compose 1.x (its
  // `required: false` is 2.x only): the services reconnect until the cluster is created.
  const profiled = Object.entries(compose.services)
    .filter(([, service]) => (service as { profiles?: string[] }).profiles)
    .map(([name]) => name);
  for (const app of ['api', 'worker', 'scheduler', 'migrate']) {
    expect(Object.keys(compose.services[app].depends_on ?? {}).filter((name) => profiled.includes(name))).toEqual([]);
    expect(JSON.stringify(compose.services[app].depends_on ?? {})).not.toContain('required');
  }
  // The node list the header tells operators to set names the six nodes, and parses.
  const line = /REDIS_CLUSTER_NODES=(\S+)/.exec(text)?.[1] ?? '';
  expect(parseRedisClusterNodes(line)).toEqual(nodes.map((host) => ({ host, port: 6379 })));
});

it('refuses a malformed REDIS_CLUSTER_NODES at start, with the variable named', () => {
  expect(parseRedisClusterNodes(undefined)).toEqual([]);
  expect(parseRedisClusterNodes('')).toEqual([]);
  expect(parseRedisClusterNodes(' a:1 , [::1]:7000 ')).toEqual([
    { host: 'a', port: 1 },
    { host: '::1', port: 7000 },
  ]);
  for (const bad of ['redis-1', 'redis-1:0', 'redis-1:70000', 'a:1,,b:2', 'redis://a:6379', 'a:b']) {
    expect(() => parseRedisClusterNodes(bad)).toThrow(/REDIS_CLUSTER_NODES must be a comma list of host:port/);
  }
});
