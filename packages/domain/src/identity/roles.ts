import type { Role } from '@sdx/db';

export type { Role };

/** The four roles of a workspace, each including the one before it (extensions.md 2). */
export const ROLES: readonly Role[] = ['viewer', 'member', 'admin', 'owner'];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** True when `role` grants at least what `required` grants; an unknown or missing role grants nothing. */
export function roleAtLeast(role: string | null | undefined, required: Role): boolean {
  return isRole(role) && ROLES.indexOf(role) >= ROLES.indexOf(required);
}
