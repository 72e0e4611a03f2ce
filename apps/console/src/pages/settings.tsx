import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, ApiProblem, unwrap } from '../api/client';
import { ErrorNotice, Field, PageHeader, SubmitButton } from '../components/ui';
import { useWorkspace } from '../session';

export default function Settings() {
  const { workspace, role, user, refresh } = useWorkspace();
  const navigate = useNavigate();
  const [teamName, setTeamName] = useState('');
  const [rename, setRename] = useState(workspace.name);
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const createTeam = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/workspaces', { body: { name: teamName.trim() } })),
    onSuccess: async (ws) => {
      setTeamName('');
      await refresh(ws.id);
      // The members page confirms the creation (and is where the team's members are invited).
      void navigate('/members', { state: { createdTeam: ws.name } });
    },
  });
  const renameWs = useMutation({
    mutationFn: () => unwrap(api.PATCH('/v1/workspaces/{workspace_id}', { params: { path: { workspace_id: workspace.id } }, body: { name: rename.trim() } })),
    onSuccess: () => refresh(workspace.id),
  });
  const password = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/auth/password', { body: { current_password: current, new_password: next } })),
    onSuccess: () => {
      setCurrent('');
      setNext('');
    },
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
            <Field label="Name">{(id) => <input id={id} required maxLength={120} value={rename} onChange={(e) => setRename(e.target.value)} />}</Field>
            <SubmitButton pending={renameWs.isPending} disabled={!rename.trim() || rename.trim() === workspace.name}>
              Rename
            </SubmitButton>
          </form>
          <ErrorNotice error={renameWs.error} />
        </section>
      )}
      <section aria-labelledby="team-title">
        <h2 id="team-title">New team workspace</h2>
        <p className="muted">A team workspace has its own credits, keys and work, and members you invite. You become its owner.</p>
        <form onSubmit={submit(createTeam)} className="inline-form">
          <Field label="Team name">{(id) => <input id={id} required maxLength={120} value={teamName} onChange={(e) => setTeamName(e.target.value)} />}</Field>
          <SubmitButton pending={createTeam.isPending} disabled={!teamName.trim()}>
            Create team workspace
          </SubmitButton>
        </form>
        <ErrorNotice error={createTeam.error} />
      </section>
      <section aria-labelledby="password-title">
        <h2 id="password-title">Your password</h2>
        <p className="muted">Signed in as {user?.email}. Changing the password signs out your other sessions.</p>
        <form onSubmit={submit(password)} className="inline-form">
          <Field label="Current password">{(id) => <input id={id} type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />}</Field>
          <Field label="New password" hint="10 to 128 characters.">
            {(id, describedBy) => (
              <input id={id} type="password" autoComplete="new-password" minLength={10} maxLength={128} aria-describedby={describedBy} required value={next} onChange={(e) => setNext(e.target.value)} />
            )}
          </Field>
          <SubmitButton pending={password.isPending} disabled={!current || next.length < 10}>
            Change password
          </SubmitButton>
        </form>
        {password.isSuccess && <p role="status">Password changed.</p>}
        <ErrorNotice
          error={password.error}
          title={password.error instanceof ApiProblem && password.error.code === 'invalid_credentials' ? 'Wrong current password' : undefined}
        />
      </section>
    </div>
  );
}
