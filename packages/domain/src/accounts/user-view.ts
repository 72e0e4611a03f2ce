import type { UserRow } from '@sdx/db';

/** A user as the API shows it (UserResponse of openapi.yaml). */
export interface UserView {
  id: string;
  email: string | null;
  display_name: string | null;
  avatar_url: string | null;
  two_factor_enabled: boolean;
}

export function renderUser(user: Pick<UserRow, 'id' | 'email' | 'display_name' | 'avatar_url' | 'two_factor_enabled_at'>): UserView {
  return {
    id: user.id,
    email: user.email,
    display_name: user.display_name,
    avatar_url: user.avatar_url,
    two_factor_enabled: user.two_factor_enabled_at !== null,
  };
}
