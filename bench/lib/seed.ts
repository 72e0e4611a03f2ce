import type { Runtime } from '@sdx/runtime';
import { createApiKey, createWorkspace, type CreateWorkspaceOptions } from '@sdx/domain';

/** A workspace and an API key for a benchmark run. */
export async function seedBenchWorkspace(runtime: Runtime, options: CreateWorkspaceOptions): Promise<{ workspaceId: string; apiKey: string }> {
  return runtime.db.transaction().execute(async (tx) => {
    const workspace = await createWorkspace(tx, runtime.services.clock, options);
    const key = await createApiKey(tx, workspace.id, 'bench');
    return { workspaceId: workspace.id, apiKey: key.api_key };
  });
}

/** Ample allowances, so that no control other than the one measured ever refuses. */
export const AMPLE = { credits: 1_000_000_000, rateLimitPerMinute: 1_000_000_000, maxActiveJobs: 1_000_000_000, maxResultLimit: 25_000 } as const;

export async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
