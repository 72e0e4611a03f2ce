import type { UserRow } from '@sdx/db';
import type { Resources } from '../resources';
import { defaultWorkspaceAmong, listUserWorkspaces, type WorkspaceView } from '../workspaces/teams';
import type { StartedSession } from './sessions';
import { renderUser, type UserView } from './user-view';

export interface SignedIn {
  user: UserView;
  workspaces: WorkspaceView[];
  /** The workspace to open after sign-in (one of workspaces), or null for the personal one. */
  defaultWorkspaceId: string | null;
  started: StartedSession;
}

/** The signed-in answer (sign-in, sign-up, verification) for a user and the session just started. */
export async function signedInAs(services: Pick<Resources, 'db'>, user: UserRow, started: StartedSession): Promise<SignedIn> {
  const workspaces = await listUserWorkspaces(services.db, user.id);
  return { user: renderUser(user), workspaces, defaultWorkspaceId: defaultWorkspaceAmong(user.default_workspace_id, workspaces), started };
}
