/**
 * A CPU profile of this process (the V8 sampling profiler, through node:inspector): start it
 * before the load to look at, stop it after; the profile is written as a .cpuprofile (open it in
 * Chrome DevTools or speedscope, or summarise it with bench/lib/profile-shares.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as T)));
  });
}

export interface CpuProfile {
  /** Stops the profiler and writes `<dir>/<name>-<time>.cpuprofile`; returns its path. */
  stop(dir: string, name: string): Promise<string>;
}

/** Starts sampling every `intervalUs` microseconds (V8's default is 1000). */
export async function startCpuProfile(intervalUs = 500): Promise<CpuProfile> {
  const session = new Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: intervalUs });
  await post(session, 'Profiler.start');
  return {
    async stop(dir, name) {
      try {
        const { profile } = await post<{ profile: unknown }>(session, 'Profiler.stop');
        mkdirSync(dir, { recursive: true });
        const file = path.resolve(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
        writeFileSync(file, JSON.stringify(profile));
        return file;
      } finally {
        session.disconnect();
      }
    },
  };
}
