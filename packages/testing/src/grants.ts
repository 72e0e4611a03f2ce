import { findWorkspace, grantCredits } from '@sdx/domain/testing';
import type { TestStack } from './stack';

/**
 * Grants purchased (or promotional) credits to any workspace of a test stack, as the admin CLI's
 * grant does, for a test that runs paid work in a workspace made over HTTP: a team workspace
 * starts with NEW_TEAM_WORKSPACE_CREDITS (default 0), so its tests grant what they spend.
 */
export async function grantWorkspaceCredits(
  stack: TestStack,
  workspaceId: string,
  credits: number,
  kind: 'purchased' | 'promotional' = 'purchased',
): Promise<void> {
  await stack.runtime.db.transaction().execute(async (tx) => {
    const workspace = await findWorkspace(tx, workspaceId);
    if (!workspace) throw new Error(`no workspace ${workspaceId}`);
    await grantCredits(tx, workspace, stack.runtime.services.clock.now(), { credits, kind, expiresAt: null });
  });
}
