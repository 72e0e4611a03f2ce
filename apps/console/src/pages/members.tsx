import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { api, currentWorkspaceId, type Role, type Schemas, unwrap } from '../api/client';
import { DataTable } from '../components/table';
import { ConfirmButton, CopyButton, ErrorNotice, Field, formatDate, Loading, PageHeader, SubmitButton } from '../components/ui';
import { atLeast, ROLES } from '../roles';
import { useWorkspace } from '../session';

type Member = Schemas['Member'];

export default function Members() {
  const { workspace, role, user, refresh } = useWorkspace();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  /** Set by Settings when it has just created this team workspace. */
  const createdTeam = (useLocation().state as { createdTeam?: string } | null)?.createdTeam;
  const path = { params: { path: { workspace_id: workspace.id } } };
  const membersKey = [currentWorkspaceId(), 'members'];
  const invitationsKey = [currentWorkspaceId(), 'invitations'];
  const members = useQuery({ queryKey: membersKey, queryFn: () => unwrap(api.GET('/v1/workspaces/{workspace_id}/members', path)) });
  const isAdmin = atLeast(role, 'admin');
  const team = workspace.kind === 'team';
  const invitations = useQuery({
    queryKey: invitationsKey,
    enabled: team,
    queryFn: () => unwrap(api.GET('/v1/workspaces/{workspace_id}/invitations', path)),
  });
  const [email, setEmail] = useState('');
  const [inviteRole, setInviteRole] = useState<Role>('member');
  const [created, setCreated] = useState<Schemas['CreatedInvitation'] | null>(null);
  const invite = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/v1/workspaces/{workspace_id}/invitations', { ...path, body: { email: email.trim(), role: inviteRole } })),
    onSuccess: (inv) => {
      setCreated(inv);
      setEmail('');
      void queryClient.invalidateQueries({ queryKey: invitationsKey });
    },
  });
  const revokeInvitation = useMutation({
    mutationFn: (id: string) =>
      unwrap(
        api.DELETE('/v1/workspaces/{workspace_id}/invitations/{invitation_id}', {
          params: { path: { workspace_id: workspace.id, invitation_id: id } },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: invitationsKey }),
  });
  const changeRole = useMutation({
    mutationFn: ({ userId, newRole }: { userId: string; newRole: Role }) =>
      unwrap(
        api.PATCH('/v1/workspaces/{workspace_id}/members/{user_id}', {
          params: { path: { workspace_id: workspace.id, user_id: userId } },
          body: { role: newRole },
        }),
      ),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: membersKey });
      await refresh(workspace.id);
    },
  });
  const removeMember = useMutation({
    mutationFn: (userId: string) =>
      unwrap(
        api.DELETE('/v1/workspaces/{workspace_id}/members/{user_id}', {
          params: { path: { workspace_id: workspace.id, user_id: userId } },
        }),
      ),
    onSuccess: async (_data, userId) => {
      if (userId === user?.id) {
        // Left: on to the overview of the workspace the console falls back to.
        await refresh();
        void navigate('/', { replace: true });
      } else await queryClient.invalidateQueries({ queryKey: membersKey });
    },
  });
  const rolesICanGive = ROLES.filter((r) => (r === 'owner' ? role === 'owner' : isAdmin));
  const canManage = (m: Member) => isAdmin && m.user_id !== user?.id && (m.role !== 'owner' || role === 'owner');
  const onInvite = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate();
  };
  return (
    <div>
      <PageHeader title="Members" />
      {createdTeam && team && (
        <p className="notice" role="status" data-testid="team-created">
          Team workspace “{createdTeam}” created, and you are its owner. It is now the workspace you are in; invite its members below.
        </p>
      )}
      {!team && (
        <p className="notice">
          This is a personal workspace: it has one member, you. To work with others, create a team workspace in Settings and invite them
          there.
        </p>
      )}
      <ErrorNotice error={members.error ?? changeRole.error ?? removeMember.error} />
      {members.data ? (
        <DataTable
          caption="Members"
          testId="members-table"
          data={members.data}
          columns={[
            { header: 'Email', accessorKey: 'email' },
            { header: 'Name', accessorKey: 'display_name' },
            {
              header: 'Role',
              accessorKey: 'role',
              cell: (c) =>
                canManage(c.row.original) ? (
                  <select
                    aria-label={`Role of ${c.row.original.email}`}
                    value={c.row.original.role}
                    onChange={(e) => changeRole.mutate({ userId: c.row.original.user_id, newRole: e.target.value as Role })}
                  >
                    {ROLES.filter((r) => rolesICanGive.includes(r) || r === c.row.original.role).map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                ) : (
                  c.row.original.role
                ),
            },
            { header: 'Joined', accessorKey: 'joined_at', cell: (c) => formatDate(c.row.original.joined_at) },
            {
              header: 'Actions',
              id: 'actions',
              enableSorting: false,
              cell: (c) =>
                team && c.row.original.user_id === user?.id ? (
                  <ConfirmButton
                    label="Leave"
                    danger
                    question={`Leave ${workspace.name}? You lose access to its work until someone invites you again.`}
                    onConfirm={() => removeMember.mutate(c.row.original.user_id)}
                  />
                ) : canManage(c.row.original) ? (
                  <ConfirmButton
                    label="Remove"
                    danger
                    question={`Remove ${c.row.original.email} from ${workspace.name}?`}
                    onConfirm={() => removeMember.mutate(c.row.original.user_id)}
                  />
                ) : null,
            },
          ]}
        />
      ) : (
        !members.error && <Loading />
      )}
      {team && (
        <section aria-labelledby="invitations-title">
          <h2 id="invitations-title">Invitations</h2>
          {created && (
            <div className="secret" data-testid="invitation-created">
              <p>
                Invitation for <strong>{created.email}</strong> ({created.role}) created, valid until {formatDate(created.expires_at)}. Send
                them this link; it is shown only now:
              </p>
              <div className="secret-value">
                <code>{created.accept_url}</code>
                <CopyButton text={created.accept_url} label="Copy link" />
              </div>
              <button type="button" onClick={() => setCreated(null)}>
                Done
              </button>
            </div>
          )}
          {isAdmin && (
            <form onSubmit={onInvite} className="inline-form" aria-label="Invite someone">
              <Field label="Email">
                {(id) => <input id={id} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}
              </Field>
              <Field label="Role">
                {(id) => (
                  <select id={id} value={inviteRole} onChange={(e) => setInviteRole(e.target.value as Role)}>
                    {rolesICanGive.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                )}
              </Field>
              <SubmitButton pending={invite.isPending} disabled={!email.trim()}>
                Invite
              </SubmitButton>
            </form>
          )}
          <ErrorNotice error={invite.error ?? revokeInvitation.error ?? invitations.error} />
          {invitations.data && (
            <DataTable
              caption="Pending invitations"
              testId="invitations-table"
              data={invitations.data}
              empty="No pending invitation."
              columns={[
                { header: 'Email', accessorKey: 'email' },
                { header: 'Role', accessorKey: 'role' },
                { header: 'Expires', accessorKey: 'expires_at', cell: (c) => formatDate(c.row.original.expires_at) },
                ...(isAdmin
                  ? [
                      {
                        header: 'Actions',
                        id: 'actions',
                        enableSorting: false,
                        cell: (c: { row: { original: Schemas['Invitation'] } }) => (
                          <ConfirmButton
                            label="Revoke"
                            danger
                            question={`Revoke the invitation of ${c.row.original.email}?`}
                            onConfirm={() => revokeInvitation.mutate(c.row.original.id)}
                          />
                        ),
                      },
                    ]
                  : []),
              ]}
            />
          )}
        </section>
      )}
    </div>
  );
}
