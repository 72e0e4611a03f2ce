import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { WorkspaceLink } from './workspace-link';
import { ApiProblem } from '../api/client';

/** Titles of the statuses a person meets, so an error reads as a sentence before its details. */
const TITLES: Record<number, string> = {
  0: 'No answer from the service',
  400: 'The request cannot be accepted',
  401: 'You are signed out',
  402: 'Not enough credits',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  410: 'No longer valid',
  413: 'Too large',
  422: 'Please check the form',
  429: 'Too many at once',
  503: 'The service is busy',
};

/** Titles by error code where the status alone would mislead (a wrong password is a 401, yet nobody was signed out). */
const CODE_TITLES: Record<string, string> = {
  invalid_credentials: 'Wrong email or password',
  invalid_api_key: 'The API key is not valid',
  invalid_otp: 'Wrong code',
  otp_required: 'Enter your two-factor code',
  email_not_verified: 'Verify your email first',
  verification_invalid: 'This link is no longer valid',
  reset_token_invalid: 'This link is no longer valid',
  mail_unavailable: 'Mail is not set up',
  two_factor_required: 'Two-factor sign-in required',
};

/** What went wrong, in words: an Error's message, or what was thrown. */
function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  return JSON.stringify(error) ?? 'Unknown error';
}

/** An error in words, with its request ID for support. */
export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const problem = error instanceof ApiProblem ? error : null;
  const heading =
    title ?? (problem ? (CODE_TITLES[problem.code] ?? TITLES[problem.status] ?? 'Something went wrong') : 'Something went wrong');
  return (
    <div className="notice notice-error" role="alert">
      <strong>{heading}.</strong> <span>{messageOf(error)}</span>
      {problem && problem.issues.length > 0 && (
        <ul>
          {problem.issues.map((issue, i) => (
            <li key={i}>
              {issue.field ? <code>{issue.field}</code> : null} {issue.message}
            </li>
          ))}
        </ul>
      )}
      {typeof problem?.detail.required_role === 'string' && problem.detail.required_role ? (
        <p>This needs the {problem.detail.required_role} role.</p>
      ) : null}
      {problem?.code === 'two_factor_required' ? <TwoFactorHint status={problem.status} /> : null}
      {problem && (
        <p className="muted small">
          {problem.code !== 'network_error' && (
            <>
              Error <code>{problem.code}</code> ·{' '}
            </>
          )}
          Request ID <code data-testid="request-id">{problem.requestId ?? 'none (no answer)'}</code>
        </p>
      )}
    </div>
  );
}

/** What to do about two_factor_required: 403, this workspace requires it of you; 409, an owner must have it before requiring it. */
export function TwoFactorHint({ status }: { status: number }) {
  return (
    <p>
      {status === 409 ? 'Turn on two-factor sign-in on your own account first, then require it here. ' : null}
      <WorkspaceLink to="/security">Turn on two-factor sign-in in your security settings</WorkspaceLink>.
    </p>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Console`;
  }, [title]);
  return (
    <div className="page-header">
      <h1>{title}</h1>
      {children ? <div className="actions">{children}</div> : null}
    </div>
  );
}

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <p className="muted" role="status">
      {label}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

const STATUS_TONE: Record<string, string> = {
  queued: 'neutral',
  running: 'info',
  completed: 'ok',
  succeeded: 'ok',
  active: 'ok',
  failed: 'bad',
  cancelled: 'muted',
  paused: 'warn',
  pending: 'neutral',
  skipped_credits: 'warn',
  skipped_overlap: 'warn',
};

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${STATUS_TONE[status] ?? 'neutral'}`}>{status.replace(/_/g, ' ')}</span>;
}

export function formatDate(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export { formatNumber } from '../format';

/** A button that asks first, in a modal dialog the keyboard can answer (Escape cancels). */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirmLabel?: string;
  danger?: boolean;
  disabled?: boolean;
  onConfirm: () => void;
  className?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  return (
    <>
      <button
        type="button"
        className={props.className ?? (props.danger ? 'danger' : '')}
        disabled={props.disabled}
        onClick={() => dialog.current?.showModal()}
      >
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId}>
        <form method="dialog">
          <p id={titleId}>{props.question}</p>
          <div className="actions">
            <button value="cancel" autoFocus>
              Cancel
            </button>
            <button
              value="confirm"
              className={props.danger ? 'danger' : 'primary'}
              onClick={(event) => {
                event.preventDefault();
                dialog.current?.close();
                props.onConfirm();
              }}
            >
              {props.confirmLabel ?? props.label}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState<'idle' | 'done' | 'failed'>('idle');
  return (
    <button
      type="button"
      onClick={() => {
        navigator.clipboard.writeText(text).then(
          () => setCopied('done'),
          () => setCopied('failed'),
        );
      }}
    >
      {copied === 'done' ? 'Copied' : copied === 'failed' ? 'Select and copy it' : label}
      <span className="visually-hidden" aria-live="polite">
        {copied === 'done' ? ' to the clipboard' : ''}
      </span>
    </button>
  );
}

/** A secret the service shows once: the value, a copy button and the warning that it will not be shown again. */
export function SecretOnce({
  title,
  secret,
  onDone,
  children,
  keptToSign = false,
}: {
  title: string;
  secret: string;
  onDone: () => void;
  children?: ReactNode;
  /** The service keeps the secret itself, to sign with (a webhook's), rather than only its hash (an API key's). */
  keptToSign?: boolean;
}) {
  return (
    <section className="secret" aria-labelledby="secret-title" data-testid="secret-once">
      <h2 id="secret-title">{title}</h2>
      <p className="notice notice-warn" role="note">
        <strong>Copy it now.</strong>{' '}
        {keptToSign
          ? 'This is the only time it is shown: the service keeps it to sign deliveries, but never shows it again. If you lose it, rotate it to get a new one.'
          : 'This is the only time it is shown: only a hash is kept, so nobody can show it to you again. If you lose it, make a new one.'}
      </p>
      <div className="secret-value">
        <code data-testid="secret-value">{secret}</code>
        <CopyButton text={secret} />
      </div>
      {children}
      <button type="button" className="primary" onClick={onDone}>
        I have stored it
      </button>
    </section>
  );
}

export function Field({
  label,
  hint,
  children,
  error,
}: {
  label: string;
  hint?: ReactNode;
  children: (id: string, describedBy: string | undefined) => ReactNode;
  error?: string | null;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id, describedBy)}
      {hint ? (
        <div id={hintId} className="hint">
          {hint}
        </div>
      ) : null}
      {error ? (
        <div id={errorId} className="field-error">
          {error}
        </div>
      ) : null}
    </div>
  );
}

/** Dialog-free "are you sure" for forms: a primary button that shows a spinner label while pending. */
export function SubmitButton({ pending, children, disabled }: { pending: boolean; children: ReactNode; disabled?: boolean }) {
  return (
    <button type="submit" className="primary" disabled={pending || disabled} aria-busy={pending}>
      {pending ? 'Working…' : children}
    </button>
  );
}

export function Pager({
  hasPrevious,
  hasNext,
  onPrevious,
  onNext,
}: {
  hasPrevious: boolean;
  hasNext: boolean;
  onPrevious: () => void;
  onNext: () => void;
}) {
  if (!hasPrevious && !hasNext) return null;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" onClick={onPrevious} disabled={!hasPrevious}>
        ← Newer
      </button>
      <button type="button" onClick={onNext} disabled={!hasNext}>
        Older →
      </button>
    </nav>
  );
}
