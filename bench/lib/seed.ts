import type { Runtime } from '@sdx/runtime';
import { createApiKey, createWorkspace, type CreateWorkspaceOptions } from '@sdx/domain/testing';

/**
 * Spend caps far above anything a run spends: set on every bench workspace and key, so the
 * admission checks both caps and keeps both months' spend on every submission, as a workspace
 * with caps does (extensions-2.md 1), without ever refusing.
 */
export const AMPLE_CAP = 1_000_000_000_000;

/**
 * A workspace and an API key for a benchmark run, each with a monthly spend cap (`caps: false`,
 * or BENCH_CAPS=0 for a run's default: none, to compare).
 */
export async function seedBenchWorkspace(
  runtime: Runtime,
  options: CreateWorkspaceOptions & { caps?: boolean },
): Promise<{ workspaceId: string; apiKey: string; keyId: string }> {
  const { caps = process.env.BENCH_CAPS !== '0', ...workspaceOptions } = options;
  return runtime.db.transaction().execute(async (tx) => {
    const workspace = await createWorkspace(tx, runtime.services.clock, workspaceOptions);
    if (caps) await tx.updateTable('workspaces').set({ monthly_credit_cap: AMPLE_CAP }).where('id', '=', workspace.id).execute();
    const key = await createApiKey(tx, workspace.id, 'bench', { monthlyCreditCap: caps ? AMPLE_CAP : null });
    return { workspaceId: workspace.id, apiKey: key.api_key, keyId: key.key_id };
  });
}

/** Ample allowances, so that no control other than the one measured ever refuses. */
export const AMPLE = {
  credits: 1_000_000_000,
  rateLimitPerMinute: 1_000_000_000,
  maxActiveJobs: 1_000_000_000,
  maxResultLimit: 25_000,
} as const;

export async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
