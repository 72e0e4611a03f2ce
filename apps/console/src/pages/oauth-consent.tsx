import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, type Role, unwrap, type Workspace } from '../api/client';
import { grantConsent } from '../api/oauth';
import { ErrorNotice, Field, Loading } from '../components/ui';
import { atLeast, ROLE_SUMMARY, ROLES } from '../roles';
import { useSession } from '../session';
import { AuthFrame } from './auth';

/** The query GET /oauth/authorize sends the browser here with (extensions-2.md 3), the optional parts null. */
interface ConsentQuery {
  clientId: string;
  clientName: string | null;
  redirectUri: string;
  codeChallenge: string;
  state: string | null;
  scope: string | null;
}

const REQUIRED = ['client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method'] as const;

/** The request, or what is wrong with it: parameters missing, or a PKCE method other than S256 (the only one). */
function readQuery(params: URLSearchParams): ConsentQuery | { missing: string[] } {
  const missing: string[] = REQUIRED.filter((name) => !params.get(name));
  if (missing.length > 0) return { missing };
  if (params.get('code_challenge_method') !== 'S256') return { missing: ['code_challenge_method=S256'] };
  return {
    clientId: params.get('client_id')!,
    clientName: params.get('client_name')?.trim() || null,
    redirectUri: params.get('redirect_uri')!,
    codeChallenge: params.get('code_challenge')!,
    state: params.get('state'),
    scope: params.get('scope')?.trim() || null,
  };
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Where the browser goes back to, in words: the redirect URI's host, or "this computer" for a loopback one. */
function destination(redirectUri: string): { host: string; loopback: boolean } {
  try {
    const url = new URL(redirectUri);
    return { host: url.host || redirectUri, loopback: LOOPBACK.has(url.hostname) };
  } catch {
    return { host: redirectUri, loopback: false };
  }
}

/** The roles the user may hand out in a workspace: none above their own. */
const grantable = (workspace: Workspace | undefined): Role[] => (workspace ? ROLES.filter((r) => atLeast(workspace.role, r)) : []);

/** The lowest role that runs jobs (member) when the user may grant it, else their own. */
function defaultRole(workspace: Workspace | undefined): Role {
  const roles = grantable(workspace);
  return roles.includes('member') ? 'member' : (roles.at(-1) ?? 'viewer');
}

/**
 * /oauth/consent: where GET /oauth/authorize sends a person whose agent asks for access. The
 * user (signed in first, the query kept) picks the workspace and the role the agent's token acts
 * with, then allows (the service answers where to send the browser: the client's redirect URI
 * with the code and state) or denies. Denying does not send the browser to the redirect URI: this
 * page cannot know it was registered, so it stays in the console.
 */
export default function OAuthConsent() {
  const [params] = useSearchParams();
  const query = readQuery(params);
  if ('missing' in query) return <IncompleteRequest missing={query.missing} />;
  return <ConsentForm query={query} />;
}

function IncompleteRequest({ missing }: { missing: string[] }) {
  return (
    <AuthFrame title="This link is incomplete">
      <p>
        A request to connect an application names the application, where to send you back and a PKCE code challenge. This one lacks{' '}
        {missing.map((name, i) => (
          <span key={name}>
            {i > 0 ? ', ' : ''}
            <code>{name}</code>
          </span>
        ))}
        . Start connecting again from the application.
      </p>
      <p>
        <Link to="/">Go to the console</Link>
      </p>
    </AuthFrame>
  );
}

function ConsentForm({ query }: { query: ConsentQuery }) {
  const session = useSession();
  const workspaces = useQuery({ queryKey: ['workspaces'], queryFn: () => unwrap(api.GET('/v1/workspaces')) });
  const [workspaceId, setWorkspaceId] = useState<string | null>(null);
  const [role, setRole] = useState<Role | null>(null);
  const [denied, setDenied] = useState(false);
  const list = workspaces.data ?? [];
  // The console's current workspace until the user picks one.
  const workspace = list.find((w) => w.id === workspaceId) ?? list.find((w) => w.id === session.workspace?.id) ?? list[0];
  const roles = grantable(workspace);
  const chosenRole = role && roles.includes(role) ? role : defaultRole(workspace);
  const allow = useMutation({
    mutationFn: () =>
      grantConsent({
        client_id: query.clientId,
        redirect_uri: query.redirectUri,
        code_challenge: query.codeChallenge,
        code_challenge_method: 'S256',
        ...(query.state !== null ? { state: query.state } : {}),
        ...(query.scope !== null ? { scope: query.scope } : {}),
        workspace_id: workspace.id,
        role: chosenRole,
      }),
    onSuccess: ({ redirect_to }) => window.location.assign(redirect_to),
  });
  const name = query.clientName ?? 'An application';
  const { host, loopback } = destination(query.redirectUri);

  if (denied) {
    return (
      <AuthFrame title="Access not granted">
        <p role="status" data-testid="consent-denied">
          <strong>{name}</strong> was not connected: it has no access to your account or workspaces. You can close this tab.
        </p>
        <p>
          <Link to="/">Go to the console</Link>
        </p>
      </AuthFrame>
    );
  }
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (workspace) allow.mutate();
  };
  const leaving = allow.isPending || allow.isSuccess;
  return (
    <AuthFrame title="Connect an application">
      <p>
        <strong data-testid="consent-client">{name}</strong> asks to use the API on your behalf: it gets a key of the workspace you choose,
        with the role you choose.
      </p>
      <dl className="facts">
        <dt>Application</dt>
        <dd>
          {name}{' '}
          <span className="muted small">
            (ID <code>{query.clientId}</code>)
          </span>
        </dd>
        <dt>Sends you back to</dt>
        <dd data-testid="consent-host">
          <strong>{host}</strong>
          {loopback ? <span className="muted small"> (an app on this computer)</span> : null}
        </dd>
        {query.scope ? (
          <>
            <dt>Asks for</dt>
            <dd>
              <code>{query.scope}</code>
            </dd>
          </>
        ) : null}
        <dt>Signed in as</dt>
        <dd>{session.user?.email}</dd>
      </dl>
      <p className="muted small">
        The name is the one the application gave itself. Allow only if you started this from an application you trust, and it runs at the
        address above.
      </p>
      <ErrorNotice error={workspaces.error} />
      {workspaces.isPending ? (
        <Loading label="Loading your workspaces" />
      ) : workspace ? (
        <form onSubmit={onSubmit} aria-label="Grant access">
          <Field label="Workspace" hint="The application sees and spends only this workspace.">
            {(id, describedBy) => (
              <select
                id={id}
                aria-describedby={describedBy}
                value={workspace.id}
                disabled={leaving}
                onChange={(e) => {
                  setWorkspaceId(e.target.value);
                  setRole(null);
                  allow.reset();
                }}
              >
                {list.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name} ({w.kind === 'personal' ? 'personal' : 'team'}, your role: {w.role})
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Role" hint={<span data-testid="role-summary">{ROLE_SUMMARY[chosenRole]}</span>}>
            {(id, describedBy) => (
              <select
                id={id}
                aria-describedby={describedBy}
                value={chosenRole}
                disabled={leaving}
                onChange={(e) => {
                  setRole(e.target.value as Role);
                  allow.reset();
                }}
              >
                {roles.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <p className="small">
            You can take the access back at any time: the application is listed with the workspace’s API keys as an OAuth app, and revoking
            it there ends its access.
          </p>
          <ErrorNotice error={allow.error} />
          {allow.isSuccess ? (
            <p role="status" className="notice">
              Access granted. Returning you to {host}…
            </p>
          ) : null}
          <div className="actions consent-actions">
            <button type="submit" className="primary" disabled={leaving} aria-busy={allow.isPending}>
              {allow.isPending ? 'Working…' : 'Allow'}
            </button>
            <button type="button" disabled={leaving} onClick={() => setDenied(true)}>
              Deny
            </button>
          </div>
        </form>
      ) : (
        !workspaces.error && <p>You have no workspace to grant access to.</p>
      )}
    </AuthFrame>
  );
}
