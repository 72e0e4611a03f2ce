import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { api, ApiProblem, unwrap } from '../api/client';
import { forgetLinkToken, linkToken } from '../link-token';
import { ErrorNotice, Field, formatDate, Loading, PageHeader, SubmitButton } from '../components/ui';
import { useSession } from '../session';

export function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
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

/**
 * Outside production without a mail server, the service's mail is in its local outbox
 * (GET /v1/dev/mail): a pointer to the console's page of it, shown only where the outbox answers.
 */
export function DevOutboxHint() {
  const outbox = useQuery({
    queryKey: ['dev-mail', 'probe'],
    queryFn: () => unwrap(api.GET('/v1/dev/mail', { params: { query: { limit: 1 } } })),
    retry: false,
    staleTime: 60_000,
  });
  if (!outbox.isSuccess) return null;
  return (
    <p className="notice" data-testid="dev-outbox-hint">
      This service runs without a mail server: its mail is in the <Link to="/mail">local outbox</Link>.
    </p>
  );
}

/** The console's OAuth consent page (GET /oauth/authorize sends the browser there). */
export const CONSENT_PATH = '/oauth/consent';

const isCode = (error: unknown, code: string) => error instanceof ApiProblem && error.code === code;

/** The new-password field of sign-up and of a reset: the service takes 10 to 128 characters. */
function NewPasswordField({ label = 'Password', value, onChange }: { label?: string; value: string; onChange: (value: string) => void }) {
  return (
    <Field label={label} hint="10 to 128 characters.">
      {(id, describedBy) => (
        <input
          id={id}
          type="password"
          autoComplete="new-password"
          required
          minLength={10}
          maxLength={128}
          aria-describedby={describedBy}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

/**
 * "Check your inbox": after a sign-up with email verification on, and after a sign-in refused
 * 403 email_not_verified. The link can be mailed again; the answer is the same whatever the
 * address, so the page promises nothing about whether an account exists.
 */
export function CheckInbox({ email, notVerified = false, onBack }: { email: string; notVerified?: boolean; onBack?: () => void }) {
  const resend = useMutation({ mutationFn: () => unwrap(api.POST('/v1/auth/verify/resend', { body: { email } })) });
  return (
    <AuthFrame title="Check your inbox">
      {notVerified && (
        <p className="notice notice-warn">Your email is not verified yet, so you cannot sign in. Follow the link we mailed you first.</p>
      )}
      <p data-testid="check-inbox">
        We sent a link to <strong>{email}</strong>. Open it to verify your email and enter the console. The link works for 24 hours.
      </p>
      <p className="muted">No mail after a few minutes? Look in your spam or junk folder, or have the link sent again.</p>
      <DevOutboxHint />
      <ErrorNotice error={resend.error} />
      {resend.isSuccess && (
        <p className="notice" role="status">
          A new link is on its way to {email}.
        </p>
      )}
      <button type="button" disabled={resend.isPending} aria-busy={resend.isPending} onClick={() => resend.mutate()}>
        {resend.isPending ? 'Sending…' : 'Resend the link'}
      </button>
      <p>
        {onBack ? (
          <button type="button" className="link" onClick={onBack}>
            Back to sign in
          </button>
        ) : (
          <Link to="/">Back to sign in</Link>
        )}
      </p>
    </AuthFrame>
  );
}

export function SignIn() {
  const session = useSession();
  const location = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  // With two-factor sign-in on, the right password is answered otp_required: then the code.
  const [step, setStep] = useState<'password' | 'code' | 'verify'>('password');
  const signIn = useMutation({
    mutationFn: () => session.signIn(email, password),
    onError: (error) => {
      if (isCode(error, 'otp_required')) setStep('code');
      if (isCode(error, 'email_not_verified')) setStep('verify');
    },
  });
  const withCode = useMutation({ mutationFn: () => session.signIn(email, password, code.replace(/\s+/g, '')) });
  const invited = location.pathname.startsWith('/invitations/accept');
  // An agent's OAuth request (/oauth/consent): the page comes back, query and all, once signed in.
  const consent = location.pathname === CONSENT_PATH;
  const comeBack = invited || consent;
  const startOver = () => {
    setStep('password');
    setCode('');
    signIn.reset();
    withCode.reset();
  };

  if (step === 'verify') return <CheckInbox email={email} notVerified onBack={startOver} />;
  if (step === 'code') {
    return (
      <AuthFrame title="Enter your code">
        <p>
          Two-factor sign-in is on for <strong>{email}</strong>. Enter the 6-digit code your authenticator app shows now, or one of your
          recovery codes.
        </p>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            withCode.mutate();
          }}
        >
          <Field label="Code" hint="6 digits, or a recovery code such as 7kq2-9xv4-mm3p.">
            {(id, describedBy) => (
              <input
                id={id}
                autoComplete="one-time-code"
                autoCapitalize="off"
                spellCheck={false}
                required
                maxLength={64}
                aria-describedby={describedBy}
                aria-invalid={isCode(withCode.error, 'invalid_otp') || undefined}
                value={code}
                onChange={(e) => setCode(e.target.value)}
                autoFocus
              />
            )}
          </Field>
          <ErrorNotice error={withCode.error} title={isCode(withCode.error, 'invalid_otp') ? 'Wrong code' : undefined} />
          <SubmitButton pending={withCode.isPending} disabled={!code.trim()}>
            Sign in
          </SubmitButton>
        </form>
        <p>
          <button type="button" className="link" onClick={startOver}>
            Use another account
          </button>
        </p>
      </AuthFrame>
    );
  }
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate();
  };
  return (
    <AuthFrame title="Sign in">
      {invited && (
        <>
          <InvitationSummary token={linkToken('/invitations/accept')} />
          <p className="notice">Sign in (or sign up) with the email the invitation was sent to, then accept it.</p>
        </>
      )}
      {consent && (
        <p className="notice" data-testid="consent-sign-in">
          Sign in (or sign up) to connect {new URLSearchParams(location.search).get('client_name')?.trim() || 'an application'} to your
          account. You choose its workspace and role next.
        </p>
      )}
      <ErrorNotice error={session.problem} />
      <form onSubmit={onSubmit}>
        <Field label="Email">
          {(id) => <input id={id} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <Field label="Password">
          {(id) => (
            <input
              id={id}
              type="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          )}
        </Field>
        <ErrorNotice error={signIn.error} />
        <SubmitButton pending={signIn.isPending}>Sign in</SubmitButton>
      </form>
      <p>
        <Link to="/reset">Forgot your password?</Link>
      </p>
      <p>
        New here?{' '}
        <Link to={{ pathname: '/signup', search: comeBack ? `?next=${encodeURIComponent(location.pathname + location.search)}` : '' }}>
          Create an account
        </Link>
      </p>
    </AuthFrame>
  );
}

export function SignUp() {
  const session = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [name, setName] = useState('');
  // Signed in at once: the console's /signup route sends the user on (to ?next= when given).
  // With email verification on: no session yet, and the page asks to follow the mailed link.
  const signUp = useMutation({ mutationFn: () => session.signUp(email, password, name) });
  if (signUp.data === 'verify') return <CheckInbox email={email} />;
  return (
    <AuthFrame title="Create an account">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          signUp.mutate();
        }}
      >
        <Field label="Name (optional)">
          {(id) => <input id={id} autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Email">
          {(id) => <input id={id} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <NewPasswordField value={password} onChange={setPassword} />
        <ErrorNotice error={signUp.error} />
        <SubmitButton pending={signUp.isPending}>Create account</SubmitButton>
      </form>
      <p>
        Have an account? <Link to="/">Sign in</Link>
      </p>
    </AuthFrame>
  );
}

/** A form that mails a new verification link (after a link that no longer works). */
function ResendForm() {
  const [email, setEmail] = useState('');
  const resend = useMutation({ mutationFn: () => unwrap(api.POST('/v1/auth/verify/resend', { body: { email } })) });
  if (resend.isSuccess) {
    return (
      <p className="notice" role="status">
        If <strong>{email}</strong> waits for verification, a new link is on its way. Look in your spam folder too.
      </p>
    );
  }
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        resend.mutate();
      }}
    >
      <Field label="Email">
        {(id) => <input id={id} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}
      </Field>
      <ErrorNotice error={resend.error} />
      <SubmitButton pending={resend.isPending}>Send a new link</SubmitButton>
    </form>
  );
}

/**
 * /verify?token=…: the link of a verification mail. It asks for the password given at the
 * sign-up that sent the link (only that one redeems it), then enters the console signed in, as a
 * sign-in does. A wrong password leaves the link usable: the page says so and asks again. The
 * token was taken out of the address bar before the page loaded (src/link-token.ts).
 */
export function VerifyEmail() {
  const session = useSession();
  const navigate = useNavigate();
  const [token] = useState(() => linkToken('/verify'));
  const [password, setPassword] = useState('');
  const verify = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/auth/verify', { body: { token, password } })),
    onSuccess: (signedIn) => {
      forgetLinkToken('/verify');
      session.enter(signedIn);
      void navigate('/', { replace: true });
    },
    onError: (error) => {
      if (isCode(error, 'verification_invalid')) forgetLinkToken('/verify');
    },
  });
  // The first session check must have answered, so its answer (from before the new cookie) cannot sign the user out again.
  const ready = session.status !== 'loading';

  if (!token) {
    return (
      <AuthFrame title="Verify your email">
        <p>This link has no token. Open the link from the mail again, or have a new one sent.</p>
        <ResendForm />
      </AuthFrame>
    );
  }
  if (isCode(verify.error, 'verification_invalid')) {
    return (
      <AuthFrame title="This link no longer works">
        <p>
          A verification link works once and for 24 hours. This one was used already, has expired, or was not copied whole. If you verified
          your email already, <Link to="/">sign in</Link>; otherwise have a new link sent.
        </p>
        <ResendForm />
      </AuthFrame>
    );
  }
  const wrong = isCode(verify.error, 'invalid_credentials');
  return (
    <AuthFrame title="Verify your email">
      <p>Enter the password you chose when you signed up. It is set on your account once the email is verified.</p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          verify.mutate();
        }}
      >
        <Field label="Password">
          {(id) => (
            <input
              id={id}
              type="password"
              autoComplete="current-password"
              required
              maxLength={128}
              aria-invalid={wrong || undefined}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              autoFocus
            />
          )}
        </Field>
        {wrong ? (
          <ErrorNotice
            error={
              new Error(
                'This is not the password of the sign-up that sent this link. If you signed up more than once, open the newest link we mailed you. If you did not sign up with this password, someone else may have used your email: sign up again, and follow the link of your own sign-up.',
              )
            }
            title="Wrong password"
          />
        ) : (
          <ErrorNotice error={verify.error} />
        )}
        <SubmitButton pending={verify.isPending} disabled={!ready || !password}>
          Verify and sign in
        </SubmitButton>
      </form>
    </AuthFrame>
  );
}

/** /reset: asks for the email to mail a reset link to; /reset?token=…: sets the new password. */
export function ResetPassword() {
  const [token] = useState(() => linkToken('/reset'));
  return token ? <NewPasswordForm token={token} /> : <RequestReset />;
}

function RequestReset() {
  const [email, setEmail] = useState('');
  const request = useMutation({ mutationFn: () => unwrap(api.POST('/v1/auth/password-reset', { body: { email } })) });
  if (request.isSuccess) {
    return (
      <AuthFrame title="Check your inbox">
        <p data-testid="reset-requested">
          If an account has the email <strong>{email}</strong>, a link to set a new password is on its way. It works once, for one hour.
        </p>
        <p className="muted">No mail after a few minutes? Look in your spam or junk folder, or ask again.</p>
        <DevOutboxHint />
        <p>
          <Link to="/">Back to sign in</Link>
        </p>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title="Reset your password">
      <p>Enter the email of your account, and we mail you a link to set a new password.</p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          request.mutate();
        }}
      >
        <Field label="Email">
          {(id) => <input id={id} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        {isCode(request.error, 'mail_unavailable') ? (
          <ErrorNotice
            error={
              new Error(
                'This service is not set up to send mail, so a password cannot be reset by mail. Ask the people who run it: `npm run admin -- reset-password EMAIL` prints a reset link.',
              )
            }
            title="Mail is not set up"
          />
        ) : (
          <ErrorNotice error={request.error} />
        )}
        <SubmitButton pending={request.isPending}>Mail me a link</SubmitButton>
      </form>
      <p>
        <Link to="/">Back to sign in</Link>
      </p>
    </AuthFrame>
  );
}

function NewPasswordForm({ token }: { token: string }) {
  const session = useSession();
  const queryClient = useQueryClient();
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [touched, setTouched] = useState(false);
  const [revokeKeys, setRevokeKeys] = useState(false);
  const confirm = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/v1/auth/password-reset/confirm', { body: { token, new_password: password, revoke_keys: revokeKeys } })),
    // Every session of the user ended, this browser's too if it had one.
    onSuccess: async () => {
      forgetLinkToken('/reset');
      queryClient.clear();
      await session.refresh();
    },
    onError: (error) => {
      if (isCode(error, 'reset_token_invalid')) forgetLinkToken('/reset');
    },
  });
  if (confirm.isSuccess) {
    return (
      <AuthFrame title="Password set">
        <p role="status" data-testid="password-set">
          Your new password is set, every session of your account has ended and every application you connected is disconnected
          {revokeKeys ? ', and every API key you created is revoked' : ''}. Sign in with the new password.
        </p>
        <p>
          <Link to="/" className="button primary">
            Sign in
          </Link>
        </p>
      </AuthFrame>
    );
  }
  if (isCode(confirm.error, 'reset_token_invalid')) {
    return (
      <AuthFrame title="This link no longer works">
        <p>A reset link works once and for one hour. This one was used already, has expired, or was not copied whole.</p>
        <p>
          <Link to="/reset">Ask for a new link</Link>
        </p>
      </AuthFrame>
    );
  }
  const mismatch = touched && again !== password ? 'The two passwords differ.' : null;
  return (
    <AuthFrame title="Set a new password">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setTouched(true);
          if (again === password) confirm.mutate();
        }}
      >
        <NewPasswordField label="New password" value={password} onChange={setPassword} />
        <Field label="New password again" error={mismatch}>
          {(id, describedBy) => (
            <input
              id={id}
              type="password"
              autoComplete="new-password"
              required
              maxLength={128}
              aria-describedby={describedBy}
              aria-invalid={mismatch ? true : undefined}
              value={again}
              onChange={(e) => setAgain(e.target.value)}
              onBlur={() => setTouched(true)}
            />
          )}
        </Field>
        <p className="muted small">
          Setting it ends every session of your account and disconnects every application (OAuth) you connected.
        </p>
        <label>
          <input type="checkbox" checked={revokeKeys} onChange={(e) => setRevokeKeys(e.target.checked)} /> Also revoke every API key I
          created (do this if someone else may have had your account)
        </label>
        <ErrorNotice error={confirm.error} />
        <SubmitButton pending={confirm.isPending}>Set the password</SubmitButton>
      </form>
    </AuthFrame>
  );
}

/**
 * What an invitation is for, read by its token before it is accepted (GET
 * /v1/invitations/preview): the workspace, the role and who sent it. A used, expired or unknown
 * token says so here, before anyone signs in or accepts.
 */
export function InvitationSummary({ token }: { token: string }) {
  const preview = useQuery({
    queryKey: ['invitation-preview', token],
    queryFn: () => unwrap(api.GET('/v1/invitations/preview', { params: { query: { token } } })),
    enabled: token !== '',
    staleTime: Infinity,
  });
  if (!token) return null;
  if (preview.isPending) return <Loading label="Reading the invitation" />;
  if (preview.error)
    return (
      <ErrorNotice
        error={preview.error}
        title={isCode(preview.error, 'invitation_invalid') ? 'This invitation no longer works' : undefined}
      />
    );
  const { workspace, role, invited_by: by, expires_at: expires } = preview.data;
  return (
    <div className="notice" data-testid="invitation-summary">
      <p>
        {by ? (
          <>
            <strong>{by.display_name ? `${by.display_name} (${by.email})` : by.email}</strong> invited you
          </>
        ) : (
          'You are invited'
        )}{' '}
        to join the workspace <strong>{workspace.name}</strong> as {role === 'admin' || role === 'owner' ? 'an' : 'a'} {role}.
      </p>
      <p className="muted small">
        Workspace <code>{workspace.id}</code> · the invitation works until {formatDate(expires)}.
      </p>
    </div>
  );
}

/** /invitations/accept?token=…: the link of an invitation, for a signed-in user. */
export function AcceptInvitation() {
  const session = useSession();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [token] = useState(() => linkToken('/invitations/accept'));
  const accept = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/invitations/accept', { body: { token } })),
    onSuccess: async (workspace) => {
      forgetLinkToken('/invitations/accept');
      queryClient.clear();
      await session.refresh(workspace.id);
      void navigate(`/w/${workspace.id}/`, { replace: true });
    },
  });
  return (
    <div>
      <PageHeader title="Accept an invitation" />
      {token ? (
        <>
          <InvitationSummary token={token} />
          <p>
            You are signed in as <strong>{session.user?.email}</strong>. Accepting adds you to this workspace when the invitation was sent
            to this email.
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
