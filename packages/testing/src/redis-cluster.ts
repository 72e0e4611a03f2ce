import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './private-servers';

const run = promisify(execFile);

/**
 * A Redis Cluster of its own for tests, drills and benches: six redis-server processes (three
 * masters, three replicas) on free loopback ports in a temporary directory, joined with
 * `redis-cli --cluster create … --cluster-replicas 1`. A master can be killed (SIGKILL, as a
 * crash) to drill a failover. Every process is stopped by its own PID.
 *
 * The node timeout is 1 s (the default is 15 s), so a killed master's replica takes over within
 * a few seconds.
 */

export interface ClusterNodeInfo {
  port: number;
  /** The cluster bus port (--cluster-port). */
  busPort: number;
}

export interface KilledMaster {
  /** The killed master's port. */
  port: number;
  /** Its replica, which the failover promotes. */
  replicaPort: number;
  /** Starts the killed node again (it rejoins as a replica of its former replica). */
  restart(): Promise<void>;
  /** Resolves once the replica is a master and the cluster serves every slot again. */
  failedOver(timeoutMs?: number): Promise<void>;
}

export interface PrivateRedisCluster {
  nodes: ClusterNodeInfo[];
  /** `host:port,…` of every node: REDIS_CLUSTER_NODES. */
  nodesEnv: string;
  /** The ports of the current masters. */
  masters(): Promise<number[]>;
  /**
   * Kills a master (the one holding `key`'s slot, or the first master) with SIGKILL. The
   * failover follows by itself; waitHealthy() waits for it.
   */
  killMaster(key?: string): Promise<KilledMaster>;
  /** Resolves once every running node says cluster_state:ok with all 16384 slots served. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /** Kills every node and removes the directory. */
  stop(): Promise<void>;
}

export const CLUSTER_NODE_TIMEOUT_MS = 1000;

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 });
  return stdout;
}

function field(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

interface NodeLine {
  id: string;
  port: number;
  master: boolean;
  failed: boolean;
  masterId: string | null;
  slots: string[];
}

/** `cluster nodes` as lines. */
async function clusterNodes(port: number): Promise<NodeLine[]> {
  const out = await cli(port, 'cluster', 'nodes');
  return out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id, address, flags, masterId, , , , , ...slots] = line.split(' ');
      return {
        id: id,
        port: Number(/:(\d+)@/.exec(address)?.[1]),
        master: flags.split(',').includes('master'),
        failed: /fail/.test(flags),
        masterId: masterId === '-' ? null : masterId,
        slots,
      };
    });
}

/** The hash slot of a key (CRC16 of its hash tag, or of the whole key), as Redis computes it. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(key)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

function holds(slots: readonly string[], slot: number): boolean {
  return slots.some((range) => {
    if (range.startsWith('[')) return false;
    const [from, to] = range.split('-').map(Number);
    return slot >= from && slot <= (to ?? from);
  });
}

export async function startRedisCluster(): Promise<PrivateRedisCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sdx-redis-cluster-'));
  const nodes: ClusterNodeInfo[] = [];
  const taken = new Set<number>();
  const pick = async () => {
    for (;;) {
      const port = await freePort();
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
  };
  for (let i = 0; i < 6; i++) nodes.push({ port: await pick(), busPort: await pick() });
  const processes = new Map<number, ChildProcess>();

  const startNode = async (node: ClusterNodeInfo) => {
    const nodeDir = path.join(dir, String(node.port));
    mkdirSync(nodeDir, { recursive: true });
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(node.port),
        '--cluster-port',
        String(node.busPort),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        String(CLUSTER_NODE_TIMEOUT_MS),
        // A replica takes over however long it was cut off from its master.
        '--cluster-replica-validity-factor',
        '0',
        '--dir',
        nodeDir,
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      { stdio: 'ignore' },
    );
    processes.set(node.port, child);
    await until(async () => (await cli(node.port, 'ping')).trim() === 'PONG', 10_000, `redis-server ${node.port}`);
  };

  const stop = async () => {
    const exits = [...processes.values()].map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      return exited;
    });
    await Promise.all(exits);
    processes.clear();
    rmSync(dir, { recursive: true, force: true });
  };

  const running = () =>
    nodes.filter((node) => {
      const child = processes.get(node.port);
      return child && child.exitCode === null && child.signalCode === null;
    });

  const waitHealthy = async (timeoutMs = 30_000) => {
    await until(
      async () => {
        for (const node of running()) {
          const info = await cli(node.port, 'cluster', 'info');
          if (field(info, 'cluster_state') !== 'ok' || field(info, 'cluster_slots_ok') !== '16384') return false;
        }
        return true;
      },
      timeoutMs,
      'the Redis Cluster',
    );
  };

  try {
    await Promise.all(nodes.map(startNode));
    await run(
      'redis-cli',
      ['--cluster', 'create', ...nodes.map((node) => `127.0.0.1:${node.port}`), '--cluster-replicas', '1', '--cluster-yes'],
      { timeout: 60_000 },
    );
    await waitHealthy();
  } catch (err) {
    await stop();
    throw err;
  }

  const masterLines = async () => {
    const live = running()[0];
    if (!live) throw new Error('no node of the cluster is running');
    return (await clusterNodes(live.port)).filter((line) => line.master && !line.failed);
  };

  return {
    nodes,
    nodesEnv: nodes.map((node) => `127.0.0.1:${node.port}`).join(','),
    async masters() {
      return (await masterLines()).map((line) => line.port);
    },
    async killMaster(key) {
      const lines = await clusterNodes(running()[0].port);
      const masters = lines.filter((line) => line.master && !line.failed);
      const victim = key === undefined ? masters[0] : masters.find((line) => holds(line.slots, keySlot(key)));
      if (!victim) throw new Error('no master found to kill');
      const replica = lines.find((line) => line.masterId === victim.id);
      const node = nodes.find((n) => n.port === victim.port)!;
      const child = processes.get(victim.port)!;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
      return {
        port: victim.port,
        replicaPort: replica?.port ?? 0,
        restart: () => startNode(node),
        async failedOver(timeoutMs = 30_000) {
          const replicaPort = replica?.port;
          if (replicaPort === undefined) throw new Error(`master ${victim.port} had no replica`);
          await until(
            async () => /^master$/m.test(await cli(replicaPort, 'role')),
            timeoutMs,
            `the failover of ${victim.port} to ${replicaPort}`,
          );
          await waitHealthy(timeoutMs);
        },
      };
    },
    waitHealthy,
    stop,
  };
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} did not come up within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
