import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { WorkspaceLink } from '../components/workspace-link';
import { api, unwrap } from '../api/client';
import { ErrorNotice, Field, PageHeader, SubmitButton } from '../components/ui';
import { workspacePath } from '../paths';
import { useWorkspace } from '../session';

export default function Settings() {
  const { workspace, role, user, refresh } = useWorkspace();
  const navigate = useNavigate();
  const [teamName, setTeamName] = useState('');
  const [rename, setRename] = useState(workspace.name);
  const createTeam = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/workspaces', { body: { name: teamName.trim() } })),
    onSuccess: async (ws) => {
      setTeamName('');
      await refresh(ws.id);
      // The members page of the new workspace confirms the creation (and is where its members are invited).
      void navigate(workspacePath(ws.id, '/members'), { state: { createdTeam: ws.name } });
    },
  });
  const renameWs = useMutation({
    mutationFn: () =>
      unwrap(
        api.PATCH('/v1/workspaces/{workspace_id}', { params: { path: { workspace_id: workspace.id } }, body: { name: rename.trim() } }),
      ),
    onSuccess: () => refresh(workspace.id),
  });
  const requireTwoFactor = useMutation({
    mutationFn: (on: boolean) =>
      unwrap(
        api.PATCH('/v1/workspaces/{workspace_id}', { params: { path: { workspace_id: workspace.id } }, body: { require_two_factor: on } }),
      ),
    onSuccess: () => refresh(workspace.id),
  });
  const submit = (action: { mutate: () => void }) => (event: FormEvent) => {
    event.preventDefault();
    action.mutate();
  };
  return (
    <div>
      <PageHeader title="Settings" />
      {role === 'owner' && (
        <section aria-labelledby="rename-title">
          <h2 id="rename-title">This workspace</h2>
          <form onSubmit={submit(renameWs)} className="inline-form">
            <Field label="Name">
              {(id) => <input id={id} required maxLength={120} value={rename} onChange={(e) => setRename(e.target.value)} />}
            </Field>
            <SubmitButton pending={renameWs.isPending} disabled={!rename.trim() || rename.trim() === workspace.name}>
              Rename
            </SubmitButton>
          </form>
          <ErrorNotice error={renameWs.error} />
          <div className="field checkbox-field">
            <label>
              <input
                type="checkbox"
                checked={Boolean(workspace.require_two_factor)}
                disabled={requireTwoFactor.isPending}
                aria-describedby="require-two-factor-hint"
                onChange={(e) => requireTwoFactor.mutate(e.target.checked)}
              />{' '}
              Require two-factor sign-in
            </label>
            <div id="require-two-factor-hint" className="hint">
              Members without two-factor sign-in cannot work here in the console until they turn it on; API keys are not affected. You need
              it on your own account first.
            </div>
          </div>
          {requireTwoFactor.isSuccess && (
            <p role="status">
              {requireTwoFactor.data.require_two_factor
                ? 'Two-factor sign-in is now required here.'
                : 'Two-factor sign-in is no longer required here.'}
            </p>
          )}
          <ErrorNotice error={requireTwoFactor.error} />
        </section>
      )}
      <section aria-labelledby="team-title">
        <h2 id="team-title">New team workspace</h2>
        <p className="muted">A team workspace has its own credits, keys and work, and members you invite. You become its owner.</p>
        <form onSubmit={submit(createTeam)} className="inline-form">
          <Field label="Team name">
            {(id) => <input id={id} required maxLength={120} value={teamName} onChange={(e) => setTeamName(e.target.value)} />}
          </Field>
          <SubmitButton pending={createTeam.isPending} disabled={!teamName.trim()}>
            Create team workspace
          </SubmitButton>
        </form>
        <ErrorNotice error={createTeam.error} />
      </section>
      <section aria-labelledby="security-title">
        <h2 id="security-title">Your password and sign-in</h2>
        <p>
          Signed in as {user?.email}. Change your password and turn on two-factor sign-in in{' '}
          <WorkspaceLink to="/security">Security</WorkspaceLink>.
        </p>
      </section>
    </div>
  );
}
