import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { api, ApiProblem, setCsrfToken, setWorkspaceId, unwrap, type Role, type Schemas, type Workspace } from './api/client';

type User = Schemas['User'];
export interface SignedIn {
  user: User;
  workspaces: Workspace[];
  /** The workspace the user opens by default (null: the personal one). */
  default_workspace_id: string | null;
  csrf_token: string;
}

export interface Session {
  status: 'loading' | 'signed-out' | 'signed-in';
  user: User | null;
  workspaces: Workspace[];
  workspace: Workspace | null;
  role: Role | null;
  /** Problem of the first session check other than "not signed in". */
  problem: ApiProblem | null;
  /** Signs in; with two-factor sign-in on, a first try without `otp` is refused 401 otp_required. */
  signIn: (email: string, password: string, otp?: string) => Promise<void>;
  /** Signs up: 'signed-in' at once, or 'verify' when the service mails a link first (no session yet). */
  signUp: (email: string, password: string, displayName: string) => Promise<'signed-in' | 'verify'>;
  /** Enters the console with a session another call started (a verified email's link). */
  enter: (signedIn: SignedIn) => void;
  signOut: () => Promise<void>;
  switchWorkspace: (id: string) => void;
  /** Reads the session again (after joining or creating a workspace). */
  refresh: (preferWorkspace?: string) => Promise<void>;
}

const SessionContext = createContext<Session | null>(null);
/** Dispatched on window when a call answers 401: the session is read again (and found ended). */
export const SESSION_ENDED = 'sdx:session-ended';
/** Dispatched on window when a call answers 403 two_factor_required: the shell shows the way to turn it on. */
export const TWO_FACTOR_REQUIRED = 'sdx:two-factor-required';
const CHOSEN = 'sdx.console.workspace';

/** The wanted workspace, else the user's default one, else the personal one, else the first. */
function pick(workspaces: Workspace[], wanted: string | null, preferred: string | null): Workspace | null {
  return (
    workspaces.find((w) => w.id === wanted) ??
    workspaces.find((w) => w.id === preferred) ??
    workspaces.find((w) => w.kind === 'personal') ??
    workspaces[0] ??
    null
  );
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [state, setState] = useState<{
    status: Session['status'];
    signedIn: SignedIn | null;
    workspace: Workspace | null;
    problem: ApiProblem | null;
  }>({
    status: 'loading',
    signedIn: null,
    workspace: null,
    problem: null,
  });

  const adopt = useCallback((signedIn: SignedIn, wanted: string | null) => {
    const workspace = pick(signedIn.workspaces, wanted ?? localStorage.getItem(CHOSEN), signedIn.default_workspace_id);
    setCsrfToken(signedIn.csrf_token);
    setWorkspaceId(workspace?.id ?? null);
    if (workspace) localStorage.setItem(CHOSEN, workspace.id);
    setState({ status: 'signed-in', signedIn, workspace, problem: null });
  }, []);

  const refresh = useCallback(
    async (preferWorkspace?: string) => {
      try {
        const session = await unwrap(api.GET('/v1/auth/session'));
        adopt(session, preferWorkspace ?? null);
      } catch (error) {
        setCsrfToken(null);
        setWorkspaceId(null);
        const problem = error instanceof ApiProblem && error.status !== 401 ? error : null;
        setState({ status: 'signed-out', signedIn: null, workspace: null, problem });
      }
    },
    [adopt],
  );

  useEffect(() => {
    void refresh();
    const ended = () => void refresh();
    window.addEventListener(SESSION_ENDED, ended);
    return () => window.removeEventListener(SESSION_ENDED, ended);
  }, [refresh]);

  const session = useMemo<Session>(
    () => ({
      status: state.status,
      user: state.signedIn?.user ?? null,
      workspaces: state.signedIn?.workspaces ?? [],
      workspace: state.workspace,
      role: (state.workspace?.role as Role | undefined) ?? null,
      problem: state.problem,
      async signIn(email, password, otp) {
        const signedIn = await unwrap(api.POST('/v1/auth/login', { body: { email, password, ...(otp ? { otp } : {}) } }));
        queryClient.clear();
        adopt(signedIn, null);
      },
      async signUp(email, password, displayName) {
        const answer = await unwrap(api.POST('/v1/auth/signup', { body: { email, password, display_name: displayName || null } }));
        if (!('csrf_token' in answer)) return 'verify';
        queryClient.clear();
        adopt(answer, null);
        return 'signed-in';
      },
      enter(signedIn) {
        queryClient.clear();
        adopt(signedIn, null);
      },
      async signOut() {
        await unwrap(api.POST('/v1/auth/logout'));
        queryClient.clear();
        setCsrfToken(null);
        setWorkspaceId(null);
        setState({ status: 'signed-out', signedIn: null, workspace: null, problem: null });
      },
      switchWorkspace(id) {
        if (!state.signedIn || id === state.workspace?.id) return;
        queryClient.clear();
        adopt(state.signedIn, id);
      },
      refresh,
    }),
    [state, adopt, refresh, queryClient],
  );
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The signed-in session with its workspace (pages behind the sign-in only). */
export function useWorkspace(): Session & { workspace: Workspace; role: Role } {
  const session = useSession();
  if (!session.workspace || !session.role) throw new Error('no workspace chosen');
  return session as Session & { workspace: Workspace; role: Role };
}
