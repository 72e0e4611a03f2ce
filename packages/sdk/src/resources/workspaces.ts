import { type Core, unwrap } from '../core';
import { List } from '../paging';
import type { components } from '../openapi';
import type { CreatedInvitation, Invitation, Member, Workspace } from '../types';

type Role = components['schemas']['MemberUpdateRequest']['role'];

export class Workspaces {
  readonly members: Members;
  readonly invitations: Invitations;

  constructor(private readonly core: Core) {
    this.members = new Members(core);
    this.invitations = new Invitations(core);
  }

  /** `GET /v1/workspaces`: the caller's workspaces. */
  list(): List<Workspace> {
    return new List<Workspace>(async () => {
      const { data } = await unwrap(this.core.http.GET('/v1/workspaces'));
      return { data, nextQuery: null };
    });
  }

  /** `POST /v1/workspaces` (signed-in users): a team workspace, the caller its owner. */
  async create(body: { name: string }): Promise<Workspace> {
    const { data } = await unwrap(this.core.http.POST('/v1/workspaces', { body }));
    return data;
  }

  /**
   * `PATCH /v1/workspaces/{workspace_id}` (owner): renames it, or sets `require_two_factor` (session
   * requests of members without two-factor sign-in are then 403 `two_factor_required`; turning it
   * on needs it on the owner's own account, else 409 `two_factor_required`).
   */
  async update(id: string, body: { name?: string; require_two_factor?: boolean }): Promise<Workspace> {
    const { data } = await unwrap(this.core.http.PATCH('/v1/workspaces/{workspace_id}', { params: { path: { workspace_id: id } }, body }));
    return data;
  }

  /** `POST /v1/invitations/accept` (signed-in users): joins the workspace an invitation's token names. */
  async acceptInvitation(token: string): Promise<Workspace> {
    const { data } = await unwrap(this.core.http.POST('/v1/invitations/accept', { body: { token } }));
    return data;
  }
}

export class Members {
  constructor(private readonly core: Core) {}

  /** `GET /v1/workspaces/{workspace_id}/members`. */
  list(workspaceId: string): List<Member> {
    return new List<Member>(async () => {
      const { data } = await unwrap(
        this.core.http.GET('/v1/workspaces/{workspace_id}/members', { params: { path: { workspace_id: workspaceId } } }),
      );
      return { data, nextQuery: null };
    });
  }

  /** `PATCH /v1/workspaces/{workspace_id}/members/{user_id}`: changes a member's role. */
  async update(workspaceId: string, userId: string, body: { role: Role }): Promise<Member> {
    const { data } = await unwrap(
      this.core.http.PATCH('/v1/workspaces/{workspace_id}/members/{user_id}', {
        params: { path: { workspace_id: workspaceId, user_id: userId } },
        body,
      }),
    );
    return data;
  }

  /** `DELETE /v1/workspaces/{workspace_id}/members/{user_id}` (members may remove themselves). */
  async remove(workspaceId: string, userId: string): Promise<void> {
    await unwrap(
      this.core.http.DELETE('/v1/workspaces/{workspace_id}/members/{user_id}', {
        params: { path: { workspace_id: workspaceId, user_id: userId } },
      }),
    );
  }
}

export class Invitations {
  constructor(private readonly core: Core) {}

  /** `POST /v1/workspaces/{workspace_id}/invitations`: `token` is shown once. */
  async create(workspaceId: string, body: { email: string; role: Role }): Promise<CreatedInvitation> {
    const { data } = await unwrap(
      this.core.http.POST('/v1/workspaces/{workspace_id}/invitations', { params: { path: { workspace_id: workspaceId } }, body }),
    );
    return data;
  }

  /** `GET /v1/workspaces/{workspace_id}/invitations`: pending ones, without tokens. */
  list(workspaceId: string): List<Invitation> {
    return new List<Invitation>(async () => {
      const { data } = await unwrap(
        this.core.http.GET('/v1/workspaces/{workspace_id}/invitations', { params: { path: { workspace_id: workspaceId } } }),
      );
      return { data, nextQuery: null };
    });
  }

  /** `DELETE /v1/workspaces/{workspace_id}/invitations/{invitation_id}`. */
  async revoke(workspaceId: string, invitationId: string): Promise<void> {
    await unwrap(
      this.core.http.DELETE('/v1/workspaces/{workspace_id}/invitations/{invitation_id}', {
        params: { path: { workspace_id: workspaceId, invitation_id: invitationId } },
      }),
    );
  }
}
