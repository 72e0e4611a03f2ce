import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { ErrorNotice, Field, PageHeader, SubmitButton } from '../components/ui';
import { useSession } from '../session';

function AuthFrame({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <main id="main" className="auth">
      <div className="auth-card">
        <p className="brand">SDX Console</p>
        <PageHeader title={title} />
        {children}
      </div>
    </main>
  );
}

export function SignIn() {
  const session = useSession();
  const location = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useMutation({ mutationFn: () => session.signIn(email, password) });
  const invited = location.pathname.startsWith('/invitations/accept');
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate();
  };
  return (
    <AuthFrame title="Sign in">
      {invited && <p className="notice">Sign in (or sign up) with the email the invitation was sent to, then accept it.</p>}
      <ErrorNotice error={session.problem} />
      <form onSubmit={onSubmit}>
        <Field label="Email">{(id) => <input id={id} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}</Field>
        <Field label="Password">
          {(id) => <input id={id} type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />}
        </Field>
        <ErrorNotice error={signIn.error} />
        <SubmitButton pending={signIn.isPending}>Sign in</SubmitButton>
      </form>
      <p>
        New here? <Link to={{ pathname: '/signup', search: invited ? `?next=${encodeURIComponent(location.pathname + location.search)}` : '' }}>Create an account</Link>
      </p>
    </AuthFrame>
  );
}

export function SignUp() {
  const session = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  // Once signed up, the console's /signup route sends the user on (to ?next= when given).
  const signUp = useMutation({ mutationFn: () => session.signUp(email, password, name) });
  return (
    <AuthFrame title="Create an account">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          signUp.mutate();
        }}
      >
        <Field label="Name (optional)">{(id) => <input id={id} autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} />}</Field>
        <Field label="Email">{(id) => <input id={id} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}</Field>
        <Field label="Password" hint="10 to 128 characters.">
          {(id, describedBy) => (
            <input
              id={id}
              type="password"
              autoComplete="new-password"
              required
              minLength={10}
              maxLength={128}
              aria-describedby={describedBy}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          )}
        </Field>
        <ErrorNotice error={signUp.error} />
        <SubmitButton pending={signUp.isPending}>Create account</SubmitButton>
      </form>
      <p>
        Have an account? <Link to="/">Sign in</Link>
      </p>
    </AuthFrame>
  );
}

/** /invitations/accept?token=…: the link of an invitation, for a signed-in user. */
export function AcceptInvitation() {
  const session = useSession();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const accept = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/invitations/accept', { body: { token } })),
    onSuccess: async (workspace) => {
      queryClient.clear();
      await session.refresh(workspace.id);
      void navigate('/', { replace: true });
    },
  });
  return (
    <div>
      <PageHeader title="Accept an invitation" />
      {token ? (
        <>
          <p>
            You are signed in as <strong>{session.user?.email}</strong>. Accepting adds you to the workspace that invited this email.
          </p>
          <ErrorNotice error={accept.error} />
          <button type="button" className="primary" disabled={accept.isPending} onClick={() => accept.mutate()}>
            Accept invitation
          </button>
        </>
      ) : (
        <p>This link has no invitation token. Open the link from the invitation again.</p>
      )}
    </div>
  );
}
