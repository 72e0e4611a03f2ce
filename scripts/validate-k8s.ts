/**
 * `npm run -s validate:k8s`: renders infra/k8s and infra/k8s/migrate as kustomize does, checks
 * every resource against the Kubernetes (and KEDA) OpenAPI schemas of the kubernetes-models
 * packages, offline, then checks what the schemas cannot: references resolve, each Deployment
 * has probes, resources, a PodDisruptionBudget and a termination grace that covers its drain,
 * the autoscalers target what exists, KEDA reads the queues the service writes, and the
 * namespace denies by default.
 *
 * The renderer knows the kustomization fields these files use (resources, namespace,
 * nameSuffix, labels, images) and refuses any other, so it never silently differs from
 * `kubectl kustomize`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { QUEUES } from '@sdx/queue';

const ROOT = path.resolve(__dirname, '..');

export interface Resource {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

/** Where the schema of each apiVersion lives. */
const MODELS: Record<string, string> = {
  v1: 'kubernetes-models/v1',
  'apps/v1': 'kubernetes-models/apps/v1',
  'batch/v1': 'kubernetes-models/batch/v1',
  'policy/v1': 'kubernetes-models/policy/v1',
  'autoscaling/v2': 'kubernetes-models/autoscaling/v2',
  'networking.k8s.io/v1': 'kubernetes-models/networking.k8s.io/v1',
  'keda.sh/v1alpha1': '@kubernetes-models/keda/keda.sh/v1alpha1',
};

const CLUSTER_SCOPED = new Set(['Namespace']);
const KUSTOMIZATION_FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'nameSuffix', 'labels', 'images', 'resources']);

interface Kustomization {
  namespace?: string;
  nameSuffix?: string;
  labels?: Array<{ pairs: Record<string, string>; includeSelectors?: boolean; includeTemplates?: boolean }>;
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  resources?: string[];
}

type PodSpec = { containers?: Container[]; initContainers?: Container[]; [key: string]: unknown };
type Container = { name: string; image?: string; [key: string]: unknown };

/** The pod spec of a workload resource, if it has one. */
export function podSpecOf(resource: Resource): PodSpec | undefined {
  const spec = resource.spec as { template?: { spec?: PodSpec } } | undefined;
  return spec?.template?.spec;
}

/** The resources `dir`'s kustomization.yaml renders. */
export function render(dir: string): Resource[] {
  const file = path.join(dir, 'kustomization.yaml');
  const k = parse(readFileSync(file, 'utf8')) as Kustomization & Record<string, unknown>;
  const unknown = Object.keys(k).filter((key) => !KUSTOMIZATION_FIELDS.has(key));
  if (unknown.length > 0) throw new Error(`${path.relative(ROOT, file)}: fields this renderer does not know: ${unknown.join(', ')}`);
  const resources: Resource[] = [];
  for (const entry of k.resources ?? []) {
    const target = path.join(dir, entry);
    if (statSync(target).isDirectory()) {
      resources.push(...render(target));
      continue;
    }
    for (const doc of parseAllDocuments(readFileSync(target, 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${path.relative(ROOT, target)}: ${doc.errors[0].message}`);
      const value = doc.toJS() as Resource | null;
      if (value) resources.push(value);
    }
  }
  for (const resource of resources) {
    if (k.namespace && !CLUSTER_SCOPED.has(resource.kind)) resource.metadata.namespace = k.namespace;
    if (k.nameSuffix && resource.kind !== 'Namespace') resource.metadata.name += k.nameSuffix;
    for (const label of k.labels ?? []) {
      if (label.includeSelectors || label.includeTemplates)
        throw new Error(`${path.relative(ROOT, file)}: labels with includeSelectors/includeTemplates are not rendered here`);
      resource.metadata.labels = { ...resource.metadata.labels, ...label.pairs };
    }
    const pod = podSpecOf(resource);
    for (const container of [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])]) {
      const image = k.images?.find((i) => container.image === i.name || container.image?.startsWith(`${i.name}:`));
      if (image) container.image = `${image.newName ?? image.name}:${image.newTag ?? 'latest'}`;
    }
  }
  return resources;
}

/** Schema problems of one resource, from its kubernetes-models class. */
async function schemaProblems(resource: Resource): Promise<string[]> {
  const where = `${resource.kind}/${resource.metadata?.name}`;
  const module = MODELS[resource.apiVersion];
  if (!module) return [`${where}: no schema for apiVersion ${resource.apiVersion}`];
  // kubernetes-models is published as ES modules only: import(), which tsx keeps as it is.
  const models = (await import(module)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = models[resource.kind];
  if (!Model) return [`${where}: no schema for kind ${resource.kind} in ${resource.apiVersion}`];
  try {
    new Model(resource).validate();
    return [];
  } catch (error) {
    return [`${where}: ${(error as Error).message}`];
  }
}

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  Boolean(selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v));

/** Seconds each process may take to drain after SIGTERM, from its entry point (apps/<name>/src/main.ts). */
export const DRAIN_SECONDS: Record<string, number> = {
  // preStop sleep (5 s) + onShutdown grace of the API (10 s).
  api: 15,
  // onShutdown's default grace (packages/runtime), used by the worker and the scheduler.
  worker: 15,
  scheduler: 15,
};

/** Problems the schemas cannot see, across every rendered resource. */
export function policyProblems(resources: Resource[], queues: { prefix: string; names: string[] }): string[] {
  const problems: string[] = [];
  const byKind = (kind: string) => resources.filter((r) => r.kind === kind);
  const named = (kind: string, name: string) => resources.find((r) => r.kind === kind && r.metadata.name === name);
  const deployments = byKind('Deployment');
  const workloads = [...deployments, ...byKind('Job')];

  const images = new Set(workloads.flatMap((w) => (podSpecOf(w)?.containers ?? []).map((c) => c.image)));
  if (images.size !== 1) problems.push(`every workload runs the one image; found ${[...images].join(', ')}`);
  const namespaces = new Set(resources.filter((r) => !CLUSTER_SCOPED.has(r.kind)).map((r) => r.metadata.namespace));
  if (namespaces.size !== 1 || namespaces.has(undefined))
    problems.push(`every resource is in one namespace; found ${[...namespaces].join(', ')}`);

  for (const workload of workloads) {
    const where = `${workload.kind}/${workload.metadata.name}`;
    const pod = podSpecOf(workload)!;
    const podSecurity = pod.securityContext as { runAsNonRoot?: boolean; seccompProfile?: { type?: string } } | undefined;
    if (podSecurity?.runAsNonRoot !== true) problems.push(`${where}: the pod must set runAsNonRoot`);
    if (podSecurity?.seccompProfile?.type !== 'RuntimeDefault')
      problems.push(`${where}: the pod must use the RuntimeDefault seccomp profile`);
    if (pod.automountServiceAccountToken !== false) problems.push(`${where}: the pod must not mount a service account token`);
    for (const container of pod.containers ?? []) {
      const c = container as Container & {
        resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
        securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
        envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
        ports?: Array<{ name?: string; containerPort: number }>;
        readinessProbe?: { httpGet?: { port: string | number; path: string } };
        livenessProbe?: { httpGet?: { port: string | number; path: string } };
      };
      const at = `${where} container ${c.name}`;
      if (!c.resources?.requests?.cpu || !c.resources.requests.memory) problems.push(`${at}: requests cpu and memory`);
      if (!c.resources?.limits?.memory) problems.push(`${at}: limits memory`);
      if (
        c.securityContext?.allowPrivilegeEscalation !== false ||
        c.securityContext.readOnlyRootFilesystem !== true ||
        !c.securityContext.capabilities?.drop?.includes('ALL')
      ) {
        problems.push(`${at}: no privilege escalation, a read-only root filesystem, every capability dropped`);
      }
      for (const ref of c.envFrom ?? []) {
        if (ref.configMapRef && !named('ConfigMap', ref.configMapRef.name))
          problems.push(`${at}: ConfigMap ${ref.configMapRef.name} does not exist`);
        if (ref.secretRef && !named('Secret', ref.secretRef.name)) problems.push(`${at}: Secret ${ref.secretRef.name} does not exist`);
      }
      if (workload.kind !== 'Deployment') continue;
      const portNames = new Set((c.ports ?? []).map((p) => p.name));
      for (const [probe, expected] of [
        ['readinessProbe', '/readyz'],
        ['livenessProbe', '/healthz'],
      ] as const) {
        const get = c[probe]?.httpGet;
        if (!get) problems.push(`${at}: ${probe} missing`);
        else if (get.path !== expected || (typeof get.port === 'string' && !portNames.has(get.port)))
          problems.push(`${at}: ${probe} must GET ${expected} on a declared port`);
      }
    }
  }

  const pdbs = byKind('PodDisruptionBudget');
  const hpas = byKind('HorizontalPodAutoscaler');
  const scaled = byKind('ScaledObject');
  for (const deployment of deployments) {
    const name = deployment.metadata.name;
    const spec = deployment.spec as {
      replicas?: number;
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> } };
    };
    const labels = spec.template.metadata.labels;
    if (!matches(spec.selector.matchLabels, labels)) problems.push(`Deployment/${name}: its selector does not match its pods`);
    if (!pdbs.some((pdb) => matches((pdb.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels, labels))) {
      problems.push(`Deployment/${name}: no PodDisruptionBudget selects its pods`);
    }
    const grace = (podSpecOf(deployment) as { terminationGracePeriodSeconds?: number }).terminationGracePeriodSeconds ?? 30;
    const drain = DRAIN_SECONDS[name];
    if (drain === undefined) problems.push(`Deployment/${name}: no known drain time`);
    else if (grace <= drain)
      problems.push(`Deployment/${name}: terminationGracePeriodSeconds ${grace} does not cover its ${drain} s drain`);
    const autoscalers = [
      ...hpas.filter((h) => (h.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef.name === name),
      ...scaled.filter((s) => (s.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name === name),
    ];
    if (autoscalers.length > 1) problems.push(`Deployment/${name}: more than one autoscaler targets it`);
    if (autoscalers.length === 1 && spec.replicas !== undefined)
      problems.push(`Deployment/${name}: an autoscaled Deployment must leave replicas unset`);
  }
  for (const target of [...hpas, ...scaled]) {
    const ref = (target.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name;
    if (!named('Deployment', ref)) problems.push(`${target.kind}/${target.metadata.name}: targets Deployment ${ref}, which does not exist`);
  }

  for (const service of byKind('Service')) {
    const spec = service.spec as { selector: Record<string, string>; ports: Array<{ targetPort: string | number }> };
    const pods = deployments.filter((d) =>
      matches(spec.selector, (d.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels),
    );
    if (pods.length === 0) problems.push(`Service/${service.metadata.name}: selects no pods`);
    for (const port of spec.ports) {
      const declared = pods.flatMap((d) =>
        (podSpecOf(d)?.containers ?? []).flatMap((c) => ((c as { ports?: Array<{ name?: string }> }).ports ?? []).map((p) => p.name)),
      );
      if (typeof port.targetPort === 'string' && !declared.includes(port.targetPort))
        problems.push(`Service/${service.metadata.name}: targetPort ${port.targetPort} is not a port of its pods`);
    }
  }

  const wanted = queues.names.map((name) => `${queues.prefix}:${name}:wait`).sort();
  for (const object of scaled) {
    const triggers = (
      object.spec as { triggers: Array<{ type: string; metadata: { listName?: string }; authenticationRef?: { name: string } }> }
    ).triggers;
    const lists = triggers
      .filter((t) => t.type === 'redis')
      .map((t) => t.metadata.listName ?? '')
      .sort();
    if (JSON.stringify(lists) !== JSON.stringify(wanted))
      problems.push(`ScaledObject/${object.metadata.name}: reads ${lists.join(', ')}; the queues wait in ${wanted.join(', ')}`);
    for (const trigger of triggers) {
      if (trigger.authenticationRef && !named('TriggerAuthentication', trigger.authenticationRef.name))
        problems.push(`ScaledObject/${object.metadata.name}: TriggerAuthentication ${trigger.authenticationRef.name} does not exist`);
    }
  }
  for (const auth of byKind('TriggerAuthentication')) {
    for (const ref of (auth.spec as { secretTargetRef?: Array<{ name: string; key: string }> }).secretTargetRef ?? []) {
      const secret = named('Secret', ref.name) as { stringData?: Record<string, string> } | undefined;
      if (!secret?.stringData || !(ref.key in secret.stringData))
        problems.push(`TriggerAuthentication/${auth.metadata.name}: Secret ${ref.name} has no ${ref.key}`);
    }
  }

  const policies = byKind('NetworkPolicy');
  const denyAll = policies.some((p) => {
    const spec = p.spec as { podSelector: Record<string, unknown>; policyTypes: string[]; ingress?: unknown; egress?: unknown };
    return (
      Object.keys(spec.podSelector).length === 0 &&
      spec.policyTypes.includes('Ingress') &&
      spec.policyTypes.includes('Egress') &&
      !spec.ingress &&
      !spec.egress
    );
  });
  if (!denyAll) problems.push('NetworkPolicy: the namespace must deny all ingress and egress by default');

  problems.push(...ingressProblems(byKind('Ingress')));

  const config = named('ConfigMap', 'sdx-config') as { data?: Record<string, string> } | undefined;
  if (config?.data?.NODE_ENV !== 'production') problems.push('ConfigMap/sdx-config: NODE_ENV must be production');
  if (/sandbox/.test(config?.data?.PROVIDER_MODE ?? 'sandbox'))
    problems.push('ConfigMap/sdx-config: PROVIDER_MODE must not put the sandbox in production');
  if ((config?.data?.REDIS_PREFIX ?? 'sdx') !== queues.prefix)
    problems.push('ConfigMap/sdx-config: REDIS_PREFIX differs from the one the ScaledObject reads');
  return problems;
}

type IngressPath = { path?: string; pathType?: string; backend?: { service?: { name?: string } } };

/** The Ingress paths that route `requestPath` (Exact: the same path; Prefix and ImplementationSpecific: by path elements, as Kubernetes matches Prefix). */
export function ingressRoutes(ingresses: Resource[], requestPath: string): IngressPath[] {
  const rules = ingresses.flatMap((i) =>
    ((i.spec as { rules?: Array<{ http?: { paths?: IngressPath[] } }> }).rules ?? []).flatMap((r) => r.http?.paths ?? []),
  );
  const defaults = ingresses
    .filter((i) => (i.spec as { defaultBackend?: unknown }).defaultBackend)
    .map(() => ({ path: '/', pathType: 'Prefix' }));
  const elements = (p: string) => p.split('/').filter(Boolean);
  return [...rules, ...defaults].filter((p) => {
    const path = p.path ?? '/';
    if (p.pathType === 'Exact') return path === requestPath;
    const prefix = elements(path);
    const request = elements(requestPath);
    return prefix.length <= request.length && prefix.every((e, i) => e === request[i]);
  });
}

/** Paths only the cluster's operators reach: no Ingress routes them (extensions-3.md 1). */
export const OPERATOR_PATHS = ['/metrics', '/admin/queues', '/admin/queues/api/queues'];

export function ingressProblems(ingresses: Resource[]): string[] {
  if (ingresses.length === 0) return ['Ingress: none ships; the API needs one that routes its public paths only'];
  const problems = OPERATOR_PATHS.filter((p) => ingressRoutes(ingresses, p).length > 0).map(
    (p) => `Ingress: routes ${p}, which only the cluster's operators may reach`,
  );
  for (const p of ['/v1/jobs', '/mcp', '/oauth/token', '/console/'])
    if (ingressRoutes(ingresses, p).length === 0) problems.push(`Ingress: does not route ${p}`);
  return problems;
}

export async function validate(
  dirs: string[],
  queues: { prefix: string; names: string[] },
): Promise<{ count: number; problems: string[] }> {
  const resources = dirs.flatMap((dir) => render(path.join(ROOT, dir)));
  const problems = (await Promise.all(resources.map(schemaProblems))).flat();
  problems.push(...policyProblems(resources, queues));
  return { count: resources.length, problems };
}

/** Every kustomization under infra/k8s. */
function kustomizations(dir = path.join(ROOT, 'infra', 'k8s')): string[] {
  const own = statSync(path.join(dir, 'kustomization.yaml'), { throwIfNoEntry: false }) ? [path.relative(ROOT, dir)] : [];
  const nested = readdirSync(dir)
    .filter((entry) => statSync(path.join(dir, entry)).isDirectory())
    .flatMap((entry) => kustomizations(path.join(dir, entry)));
  return [...own, ...nested];
}

async function main(): Promise<void> {
  const dirs = kustomizations();
  const { count, problems } = await validate(dirs, { prefix: 'sdx', names: Object.values(QUEUES) });
  if (problems.length > 0) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
  console.log(`${dirs.join(', ')}: ${count} resources valid`);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
