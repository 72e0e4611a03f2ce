/**
 * CPU time of other processes on this machine, read from /proc/<pid>/stat (utime + stime, in
 * clock ticks): the Postgres backends serving one database, a redis-server, a service process.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type pg from 'pg';

let ticksPerSecond: number | null = null;

/** sysconf(_SC_CLK_TCK), 100 on Linux unless told otherwise. */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** The process's user + system CPU so far, in seconds; null when it has exited. */
export function processCpuSeconds(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command (which may hold spaces) in its parentheses: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / clockTicksPerSecond();
}

/** CPU seconds a fixed set of processes spent between start() and stop(). */
export function processesCpu(pids: number[]): { stop(): number } {
  const before = new Map(pids.map((pid) => [pid, processCpuSeconds(pid) ?? 0]));
  return {
    stop() {
      let total = 0;
      for (const [pid, start] of before) total += (processCpuSeconds(pid) ?? start) - start;
      return total;
    },
  };
}

export interface PostgresCpu {
  /** The backends of the database (every connection to it, from any process). */
  backends: number;
  /** Server-wide processes (WAL writer, checkpointer, background writer, autovacuum): shared with every database of the server. */
  auxiliary: number;
  /** How many distinct backends were seen. */
  backendCount: number;
}

/**
 * Samples, every `intervalMs`, the CPU of the Postgres processes: the backends connected to
 * `database` (pg_stat_activity.datname) and the server's auxiliary processes. A process first
 * seen after start counts from zero; one that exits counts up to its last sample. Postgres must
 * run on this machine (its processes' /proc entries readable).
 */
export function samplePostgresCpu(pool: pg.Pool, database: string, intervalMs = 200): { stop(): Promise<PostgresCpu> } {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const auxiliary = new Set<number>();
  let started = false;
  const sample = async () => {
    const { rows } = await pool.query<{ pid: number; aux: boolean }>(
      `select pid, datname is distinct from $1 as aux from pg_stat_activity
        where datname = $1 or backend_type in ('walwriter', 'checkpointer', 'background writer', 'autovacuum worker', 'autovacuum launcher')`,
      [database],
    );
    for (const { pid, aux } of rows) {
      const cpu = processCpuSeconds(pid);
      if (cpu === null) continue;
      if (aux) auxiliary.add(pid);
      if (!first.has(pid)) first.set(pid, started ? 0 : cpu);
      last.set(pid, cpu);
    }
    started = true;
  };
  let running: Promise<void> = sample();
  const timer = setInterval(() => {
    running = running.then(sample).catch(() => undefined);
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await sample();
      let backends = 0;
      let aux = 0;
      for (const [pid, start] of first) {
        const spent = (last.get(pid) ?? start) - start;
        if (auxiliary.has(pid)) aux += spent;
        else backends += spent;
      }
      return { backends, auxiliary: aux, backendCount: first.size - auxiliary.size };
    },
  };
}
