import { useMutation } from '@tanstack/react-query';
import QRCode from 'qrcode';
import { type FormEvent, useEffect, useState } from 'react';
import { api, ApiProblem, unwrap } from '../api/client';
import { CopyButton, ErrorNotice, Field, PageHeader, SubmitButton } from '../components/ui';
import { useSession } from '../session';

/**
 * The signed-in user's own security: the password (with the choice to revoke every API key the
 * user made) and two-factor sign-in (TOTP). Calls about the user name no workspace, so a
 * workspace that requires two-factor sign-in never blocks the way to turn it on.
 */
export default function Security() {
  return (
    <div className="stack">
      <PageHeader title="Security" />
      <PasswordSection />
      <TwoFactorSection />
    </div>
  );
}

const wrongPassword = (error: unknown) =>
  error instanceof ApiProblem && error.code === 'invalid_credentials' ? 'Wrong current password' : undefined;
const wrongCode = (error: unknown) => (error instanceof ApiProblem && error.code === 'invalid_otp' ? 'Wrong code' : undefined);

function PasswordSection() {
  const { user } = useSession();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  // The console asks, before the change, whether the user's API keys go too (after a theft they should).
  const [asking, setAsking] = useState(false);
  const change = useMutation({
    mutationFn: (revokeApiKeys: boolean) =>
      unwrap(
        api.POST('/v1/auth/password', { body: { current_password: current, new_password: next, revoke_api_keys: revokeApiKeys } }),
      ).then(() => revokeApiKeys),
    onSuccess: () => {
      setCurrent('');
      setNext('');
      setAsking(false);
    },
    onError: () => setAsking(false),
  });
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    change.reset();
    setAsking(true);
  };
  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Your password</h2>
      <p className="muted">Signed in as {user?.email}. Changing the password signs out your other sessions.</p>
      {asking ? (
        <div className="notice notice-warn" role="group" aria-labelledby="revoke-question" data-testid="revoke-question">
          <p id="revoke-question">
            <strong>Also revoke every API key you created?</strong>
          </p>
          <p>
            If someone else may know your password, they may have made API keys with it. Revoking every key you created, in every workspace,
            shuts them out; your own programs that use those keys stop working until you give them new keys.
          </p>
          <div className="actions">
            <button type="button" className="primary" disabled={change.isPending} onClick={() => change.mutate(false)}>
              Change password, keep my keys
            </button>
            <button type="button" className="danger" disabled={change.isPending} onClick={() => change.mutate(true)}>
              Change password and revoke my keys
            </button>
            <button type="button" disabled={change.isPending} onClick={() => setAsking(false)}>
              Back
            </button>
          </div>
        </div>
      ) : (
        <form onSubmit={onSubmit} className="inline-form">
          <Field label="Current password">
            {(id) => (
              <input
                id={id}
                type="password"
                autoComplete="current-password"
                required
                value={current}
                onChange={(e) => setCurrent(e.target.value)}
              />
            )}
          </Field>
          <Field label="New password" hint="10 to 128 characters.">
            {(id, describedBy) => (
              <input
                id={id}
                type="password"
                autoComplete="new-password"
                minLength={10}
                maxLength={128}
                aria-describedby={describedBy}
                required
                value={next}
                onChange={(e) => setNext(e.target.value)}
              />
            )}
          </Field>
          <SubmitButton pending={change.isPending} disabled={!current || next.length < 10}>
            Change password
          </SubmitButton>
        </form>
      )}
      {change.isSuccess && (
        <p role="status" className="notice">
          Password changed; your other sessions have ended.{change.data ? ' Every API key you created is revoked.' : ''}
        </p>
      )}
      <ErrorNotice error={change.error} title={wrongPassword(change.error)} />
    </section>
  );
}

function TwoFactorSection() {
  const session = useSession();
  const enabled = Boolean(session.user?.two_factor_enabled);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [settingUp, setSettingUp] = useState(false);
  const [turningOff, setTurningOff] = useState(false);
  return (
    <section aria-labelledby="two-factor-title">
      <h2 id="two-factor-title">Two-factor sign-in</h2>
      {codes ? (
        <RecoveryCodes
          codes={codes}
          onDone={() => {
            setCodes(null);
          }}
        />
      ) : enabled ? (
        <>
          <p data-testid="two-factor-status">
            <strong>On.</strong> Signing in asks for a code of your authenticator app (or a recovery code) after the password.
          </p>
          {turningOff ? (
            <TurnOff onDone={() => setTurningOff(false)} />
          ) : (
            <button type="button" className="danger" onClick={() => setTurningOff(true)}>
              Turn off
            </button>
          )}
        </>
      ) : settingUp ? (
        <SetUp
          onEnabled={(recoveryCodes) => {
            setSettingUp(false);
            setCodes(recoveryCodes);
          }}
          onCancel={() => setSettingUp(false)}
        />
      ) : (
        <>
          <p data-testid="two-factor-status">
            <strong>Off.</strong> With it on, signing in also asks for a code of an authenticator app on your phone, so a stolen password
            alone does not open your account.
          </p>
          <button type="button" className="primary" onClick={() => setSettingUp(true)}>
            Turn on
          </button>
        </>
      )}
    </section>
  );
}

/** The secret in groups of four, easier to type. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ');

function SetUp({ onEnabled, onCancel }: { onEnabled: (codes: string[]) => void; onCancel: () => void }) {
  const { refresh, workspace } = useSession();
  const [code, setCode] = useState('');
  const [qr, setQr] = useState<string | null>(null);
  const setup = useMutation({ mutationFn: () => unwrap(api.POST('/v1/auth/2fa/setup')) });
  const enable = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/auth/2fa/enable', { body: { code: code.replace(/\s+/g, '') } })),
    onSuccess: async (answer) => {
      onEnabled(answer.recovery_codes);
      await refresh(workspace?.id);
    },
  });
  const { mutate: start } = setup;
  useEffect(() => start(), [start]);
  const url = setup.data?.otpauth_url;
  useEffect(() => {
    if (!url) return;
    // Drawn here, from the URL the service answered: the secret never leaves the page.
    let live = true;
    QRCode.toDataURL(url, { errorCorrectionLevel: 'M', margin: 2, width: 200 }).then(
      (data) => live && setQr(data),
      () => live && setQr(null),
    );
    return () => {
      live = false;
    };
  }, [url]);
  if (setup.isError) {
    return (
      <>
        <ErrorNotice error={setup.error} />
        <button type="button" onClick={onCancel}>
          Back
        </button>
      </>
    );
  }
  if (!setup.data)
    return (
      <p className="muted" role="status">
        Making a secret…
      </p>
    );
  return (
    <div data-testid="two-factor-setup">
      <ol className="steps">
        <li>
          <p>Scan this QR code with an authenticator app (Google Authenticator, 1Password, Authy, …).</p>
          {qr ? (
            <img src={qr} width={200} height={200} alt="QR code of your two-factor secret" data-testid="totp-qr" />
          ) : (
            <p className="muted">Drawing the QR code…</p>
          )}
          <p>
            Or type this key into the app: <code data-testid="totp-secret">{grouped(setup.data.secret)}</code>{' '}
            <CopyButton text={setup.data.secret} label="Copy the key" />
          </p>
        </li>
        <li>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              enable.mutate();
            }}
            className="inline-form"
          >
            <Field label="Code from the app" hint="The 6 digits the app shows now.">
              {(id, describedBy) => (
                <input
                  id={id}
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  pattern="\s*\d{3}\s*\d{3}\s*"
                  required
                  maxLength={9}
                  aria-describedby={describedBy}
                  aria-invalid={wrongCode(enable.error) ? true : undefined}
                  value={code}
                  onChange={(e) => setCode(e.target.value)}
                />
              )}
            </Field>
            <SubmitButton pending={enable.isPending} disabled={!code.trim()}>
              Turn on two-factor sign-in
            </SubmitButton>
          </form>
          <ErrorNotice error={enable.error} title={wrongCode(enable.error)} />
        </li>
      </ol>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

/** The ten recovery codes, shown this once: copy, download, then "I saved them". */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const text = codes.join('\n') + '\n';
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = 'sdx-recovery-codes.txt';
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  };
  return (
    <section className="secret" aria-labelledby="recovery-title" data-testid="recovery-codes">
      <h3 id="recovery-title">Two-factor sign-in is on. Save your recovery codes</h3>
      <p className="notice notice-warn" role="note">
        <strong>Save them now.</strong> This is the only time they are shown. Each code signs you in once in place of an app code, if you
        lose your phone. Keep them where you keep your passwords.
      </p>
      <ol className="codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ol>
      <div className="actions">
        <CopyButton text={text} label="Copy the codes" />
        <button type="button" onClick={download}>
          Download the codes
        </button>
        <button type="button" className="primary" onClick={onDone}>
          I saved them
        </button>
      </div>
    </section>
  );
}

function TurnOff({ onDone }: { onDone: () => void }) {
  const { refresh, workspace } = useSession();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const disable = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/auth/2fa/disable', { body: { password, code: code.replace(/\s+/g, '') } })),
    onSuccess: async () => {
      await refresh(workspace?.id);
      onDone();
    },
  });
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        disable.mutate();
      }}
      data-testid="two-factor-off"
    >
      <p>Turning it off needs your password and a current code (or a recovery code). The secret and the recovery codes are deleted.</p>
      <div className="inline-form">
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
        <Field label="Code" hint="From the app, or a recovery code.">
          {(id, describedBy) => (
            <input
              id={id}
              autoComplete="one-time-code"
              autoCapitalize="off"
              spellCheck={false}
              required
              maxLength={64}
              aria-describedby={describedBy}
              value={code}
              onChange={(e) => setCode(e.target.value)}
            />
          )}
        </Field>
      </div>
      <ErrorNotice error={disable.error} title={wrongPassword(disable.error) ?? wrongCode(disable.error)} />
      <div className="actions">
        <SubmitButton pending={disable.isPending} disabled={!password || !code.trim()}>
          Turn off two-factor sign-in
        </SubmitButton>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
