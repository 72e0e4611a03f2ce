import type { Role } from './api/client';

const RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

/** Whether `role` includes `needed` (extensions.md 2: each role includes the ones below it). */
export function atLeast(role: string | null | undefined, needed: Role): boolean {
  return role != null && role in RANK && RANK[role as Role] >= RANK[needed];
}

export const ROLES: Role[] = ['viewer', 'member', 'admin', 'owner'];
