import type { Role } from './api/client';

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

/** Whether `role` includes `needed` (extensions.md 2: each role includes the ones below it). */
export function atLeast(role: string | null | undefined, needed: Role): boolean {
  return role != null && role in RANK && RANK[role as Role] >= RANK[needed];
}

export const ROLES: Role[] = ['viewer', 'member', 'admin', 'owner'];

/** What each role may do, in a line (extensions.md 2), for pickers that hand a role to someone else. */
export const ROLE_SUMMARY: Record<Role, string> = {
  viewer: 'Reads everything in the workspace (jobs, results, usage, schedules, webhooks, members), but cannot start work or spend credits.',
  member: 'Reads everything, and starts and cancels jobs, batches and schedules, which spends the workspace’s credits.',
  admin: 'What a member may, and also manages API keys, webhooks, invitations and members’ roles below owner.',
  owner: 'Everything, including renaming the workspace and making or unmaking owners.',
};
