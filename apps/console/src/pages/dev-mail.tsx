import { useQuery } from '@tanstack/react-query';
import { Fragment } from 'react';
import { Link } from 'react-router';
import { api, ApiProblem, unwrap } from '../api/client';
import { ErrorNotice, formatDate, Loading } from '../components/ui';
import { AuthFrame } from './auth';

const isCode = (error: unknown, code: string) => error instanceof ApiProblem && error.code === code;

/** A mail's text with its links made clickable (they open here: the service's own pages). */
function Linked({ text }: { text: string }) {
  const parts = text.split(/(https?:\/\/[^\s<>"]+)/g);
  return (
    <pre className="mail-text">
      {parts.map((part, index) =>
        index % 2 === 1 ? (
          <a key={index} href={part}>
            {part}
          </a>
        ) : (
          <Fragment key={index}>{part}</Fragment>
        ),
      )}
    </pre>
  );
}

/**
 * /console/mail: the local dev outbox (GET /v1/dev/mail), newest first: outside production
 * without SMTP_URL, every mail the service would have sent, with its links to follow. Open to
 * whoever runs the service on this machine, signed in or not (the verification and reset links
 * are for people who cannot sign in yet).
 */
export default function DevMail() {
  const mails = useQuery({
    queryKey: ['dev-mail'],
    queryFn: () => unwrap(api.GET('/v1/dev/mail', { params: { query: { limit: 50 } } })),
    retry: false,
    refetchInterval: 3_000,
  });
  return (
    <AuthFrame title="Local mail">
      {mails.isPending && <Loading label="Reading the local outbox" />}
      {isCode(mails.error, 'not_found') ? (
        <p className="notice" data-testid="dev-mail-off">
          This service has no local outbox: it sends its mail through a mail server (SMTP_URL), or runs in production. Look in the inbox of
          the address the mail went to.
        </p>
      ) : (
        <ErrorNotice error={mails.error} />
      )}
      {mails.data && (
        <>
          <p className="muted">
            Running without a mail server, the service writes its mail here instead of sending it (newest first; this page refreshes
            itself).
          </p>
          {mails.data.length === 0 && (
            <p data-testid="dev-mail-empty">No mail yet. Sign up, ask for a password reset or invite someone, and the mail appears here.</p>
          )}
          <ol className="mail-list" data-testid="dev-mail">
            {mails.data.map((mail) => (
              <li key={mail.id}>
                <details open={mail === mails.data[0]}>
                  <summary>
                    <strong>{mail.subject}</strong> to {mail.to} · <time dateTime={mail.created_at}>{formatDate(mail.created_at)}</time>
                  </summary>
                  <Linked text={mail.text} />
                </details>
              </li>
            ))}
          </ol>
        </>
      )}
      <p>
        <Link to="/">Back to the console</Link>
      </p>
    </AuthFrame>
  );
}
