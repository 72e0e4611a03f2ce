import { lazy, type ReactNode, Suspense, useEffect, useRef, useState } from 'react';
import { Link, Navigate, NavLink, Route, Routes, useLocation, useNavigate, useParams, useSearchParams } from 'react-router';
import { Loading, PageHeader } from './components/ui';
import { AcceptInvitation, CONSENT_PATH, ResetPassword, SignIn, SignUp, VerifyEmail } from './pages/auth';
import { atLeast } from './roles';
import { switchedPath, useAt, workspacePath } from './paths';
import { TWO_FACTOR_REQUIRED, useSession } from './session';

const Overview = lazy(() => import('./pages/overview'));
const Jobs = lazy(() => import('./pages/jobs'));
const JobDetail = lazy(() => import('./pages/job-detail'));
const NewWork = lazy(() => import('./pages/new-work'));
const Batches = lazy(() => import('./pages/batches'));
const BatchDetail = lazy(() => import('./pages/batch-detail'));
const Schedules = lazy(() => import('./pages/schedules'));
const ScheduleDetail = lazy(() => import('./pages/schedule-detail'));
const ScheduleEdit = lazy(() => import('./pages/schedule-edit'));
const Monitors = lazy(() => import('./pages/monitors'));
const MonitorDetail = lazy(() => import('./pages/monitor-detail'));
const MonitorEdit = lazy(() => import('./pages/monitor-edit'));
const Keys = lazy(() => import('./pages/keys'));
const Members = lazy(() => import('./pages/members'));
const Webhooks = lazy(() => import('./pages/webhooks'));
const Destinations = lazy(() => import('./pages/destinations'));
const WebhookDetail = lazy(() => import('./pages/webhook-detail'));
const Billing = lazy(() => import('./pages/billing'));
const Audit = lazy(() => import('./pages/audit'));
const Settings = lazy(() => import('./pages/settings'));
// Lazy, like every page, and more so: the QR code library loads only with it.
const Security = lazy(() => import('./pages/security'));
const OAuthConsent = lazy(() => import('./pages/oauth-consent'));
// The local dev outbox: outside production, the mail a laptop's service would have sent.
const DevMail = lazy(() => import('./pages/dev-mail'));

/** The pages of a mailed link, the same whether or not a session is open in this browser. */
const LINK_PAGES = new Set(['/verify', '/reset', '/mail']);

export function App() {
  const session = useSession();
  const location = useLocation();
  if (LINK_PAGES.has(location.pathname)) {
    return (
      <Routes>
        <Route path="/verify" element={<VerifyEmail />} />
        <Route path="/reset" element={<ResetPassword />} />
        <Route
          path="/mail"
          element={
            <Suspense fallback={<Loading />}>
              <DevMail />
            </Suspense>
          }
        />
      </Routes>
    );
  }
  if (session.status === 'loading') return <Loading label="Opening the console" />;
  if (session.status === 'signed-out') {
    return (
      <Routes>
        <Route path="/signup" element={<SignUp />} />
        <Route path="/invitations/accept" element={<SignIn />} />
        <Route path="*" element={<SignIn />} />
      </Routes>
    );
  }
  // An agent's OAuth request: a page of its own, as the sign-in is, without the console's menu.
  if (location.pathname === CONSENT_PATH) {
    return (
      <Suspense fallback={<Loading />}>
        <OAuthConsent />
      </Suspense>
    );
  }
  return (
    <Routes>
      <Route path="/w/:workspaceId/*" element={<WorkspaceScope />} />
      <Route
        path="/invitations/accept"
        element={
          <Shell>
            <AcceptInvitation />
          </Shell>
        }
      />
      <Route path="/signup" element={<AfterSignUp />} />
      <Route path="*" element={<ToChosenWorkspace />} />
    </Routes>
  );
}

/**
 * /w/{workspace_id}/…: the pages of one workspace. The URL names the workspace: opening it (a
 * shared link, the browser's back button) makes it the chosen one, as the switcher does; a
 * workspace the user is no member of is named, and not opened.
 */
function WorkspaceScope() {
  const session = useSession();
  const { workspaceId = '' } = useParams();
  const member = session.workspaces.find((w) => w.id === workspaceId) ?? null;
  const chosen = session.workspace?.id ?? null;
  useEffect(() => {
    if (member && chosen !== member.id) session.switchWorkspace(member.id);
  }, [member, chosen, session]);
  if (!member) {
    return (
      <Shell>
        <NotAMember workspaceId={workspaceId} />
      </Shell>
    );
  }
  if (chosen !== member.id) return <Loading label="Opening the workspace" />;
  return (
    <Shell>
      <WorkspaceRoutes />
    </Shell>
  );
}

/** A URL of the console without a workspace (an older link, or /): the same page in the chosen workspace. */
function ToChosenWorkspace() {
  const session = useSession();
  const location = useLocation();
  if (!session.workspace) {
    return (
      <Shell>
        <NotFound />
      </Shell>
    );
  }
  const path = location.pathname === '/signin' ? '/' : location.pathname;
  return <Navigate to={{ pathname: workspacePath(session.workspace.id, path), search: location.search, hash: location.hash }} replace />;
}

/** A shared link of a workspace the signed-in user is not a member of: which one, and what to do. */
function NotAMember({ workspaceId }: { workspaceId: string }) {
  const at = useAt();
  return (
    <div data-testid="not-a-member">
      <PageHeader title="Not a member of this workspace" />
      <p>
        This link belongs to the workspace <code>{workspaceId}</code>, and you are not a member of it. Ask an admin of that workspace to
        invite your email; the invitation’s link adds you to it.
      </p>
      <p>
        <Link to={at('/')}>Go to the overview of your current workspace</Link>, or choose another of your workspaces above.
      </p>
    </div>
  );
}

interface NavItem {
  to: string;
  label: string;
  show: boolean;
}

function Shell({ children }: { children: ReactNode }) {
  const session = useSession();
  const at = useAt();
  const role = session.role;
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    setMenuOpen(false);
    main.current?.focus({ preventScroll: true });
  }, [location.pathname]);
  const nav: NavItem[] = [
    { to: at('/'), label: 'Overview', show: true },
    { to: at('/jobs/new'), label: 'New job', show: atLeast(role, 'member') },
    { to: at('/jobs'), label: 'Jobs', show: true },
    { to: at('/batches'), label: 'Batches', show: true },
    { to: at('/schedules'), label: 'Schedules', show: true },
    { to: at('/monitors'), label: 'Monitors', show: true },
    { to: at('/keys'), label: 'API keys', show: true },
    { to: at('/members'), label: 'Members', show: true },
    { to: at('/webhooks'), label: 'Webhooks', show: true },
    { to: at('/destinations'), label: 'Destinations', show: true },
    { to: at('/billing'), label: 'Billing', show: true },
    { to: at('/audit'), label: 'Audit events', show: atLeast(role, 'admin') },
    { to: at('/settings'), label: 'Settings', show: true },
    { to: at('/security'), label: 'Security', show: true },
  ];
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">SDX Console</span>
        <WorkspaceSwitcher />
        <button
          type="button"
          className="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
      </header>
      <nav id="main-nav" className={menuOpen ? 'sidebar open' : 'sidebar'} aria-label="Console">
        <ul>
          {nav
            .filter((item) => item.show)
            .map((item) => (
              <li key={item.to}>
                <NavLink to={item.to} end={item.to === at('/') || item.to === at('/jobs')}>
                  {item.label}
                </NavLink>
              </li>
            ))}
          <li>
            <a href="/docs">API reference</a>
          </li>
        </ul>
        <div className="who">
          <span className="muted small">{session.user?.email}</span>
          <button type="button" className="link" onClick={() => void session.signOut()}>
            Sign out
          </button>
        </div>
      </nav>
      <main id="main" ref={main} tabIndex={-1}>
        <TwoFactorNotice />
        <Suspense fallback={<Loading />}>{children}</Suspense>
      </main>
    </div>
  );
}

/** The pages of the chosen workspace, under /w/{workspace_id}. */
function WorkspaceRoutes() {
  return (
    <Routes>
      <Route index element={<Overview />} />
      <Route path="jobs" element={<Jobs />} />
      <Route path="jobs/new" element={<NewWork mode="job" />} />
      <Route path="jobs/:jobId" element={<JobDetail />} />
      <Route path="batches" element={<Batches />} />
      <Route path="batches/new" element={<NewWork mode="batch" />} />
      <Route path="batches/:batchId" element={<BatchDetail />} />
      <Route path="schedules" element={<Schedules />} />
      <Route path="schedules/new" element={<ScheduleEdit />} />
      <Route path="schedules/:scheduleId" element={<ScheduleDetail />} />
      <Route path="schedules/:scheduleId/edit" element={<ScheduleEdit />} />
      <Route path="monitors" element={<Monitors />} />
      <Route path="monitors/new" element={<MonitorEdit />} />
      <Route path="monitors/:monitorId" element={<MonitorDetail />} />
      <Route path="keys" element={<Keys />} />
      <Route path="members" element={<Members />} />
      <Route path="webhooks" element={<Webhooks />} />
      <Route path="webhooks/:webhookId" element={<WebhookDetail />} />
      <Route path="destinations" element={<Destinations />} />
      <Route path="billing" element={<Billing />} />
      <Route path="audit" element={<Audit />} />
      <Route path="settings" element={<Settings />} />
      <Route path="security" element={<Security />} />
      <Route path="*" element={<NotFound />} />
    </Routes>
  );
}

/** Choosing another workspace opens its URL (the same page, or the list of a detail page's kind); the URL then chooses it. */
function WorkspaceSwitcher() {
  const session = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  return (
    <div className="switcher">
      <label htmlFor="workspace-switcher" className="visually-hidden">
        Workspace
      </label>
      <select
        id="workspace-switcher"
        value={session.workspace?.id ?? ''}
        onChange={(event) => void navigate(switchedPath(location.pathname, event.target.value))}
      >
        {session.workspaces.map((w) => (
          <option key={w.id} value={w.id}>
            {w.name} ({w.kind === 'personal' ? 'personal' : 'team'}, {w.role})
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * Above every page, once a call of this workspace was refused 403 two_factor_required: the
 * workspace requires two-factor sign-in, which the user has not turned on. Gone when the user
 * turns it on or changes workspace.
 */
function TwoFactorNotice() {
  const session = useSession();
  const at = useAt();
  const [refusedIn, setRefusedIn] = useState<string | null>(null);
  const workspaceId = session.workspace?.id ?? null;
  useEffect(() => {
    const refused = () => setRefusedIn(workspaceId);
    window.addEventListener(TWO_FACTOR_REQUIRED, refused);
    return () => window.removeEventListener(TWO_FACTOR_REQUIRED, refused);
  }, [workspaceId]);
  if (!refusedIn || refusedIn !== workspaceId || session.user?.two_factor_enabled) return null;
  return (
    <div className="notice notice-warn" role="alert" data-testid="two-factor-required">
      <strong>{session.workspace?.name} requires two-factor sign-in.</strong> Its pages stay closed to you until you{' '}
      <Link to={at('/security')}>turn on two-factor sign-in in your security settings</Link>, or switch to another workspace.
    </div>
  );
}

/** Just signed up: on to where the sign-up came from (an invitation's link), else the overview. */
function AfterSignUp() {
  const [params] = useSearchParams();
  const next = params.get('next');
  return <Navigate to={next && next.startsWith('/') && !next.startsWith('//') ? next : '/'} replace />;
}

function NotFound() {
  const at = useAt();
  return (
    <div>
      <h1>Page not found</h1>
      <p>
        There is no such page in the console. <NavLink to={at('/')}>Go to the overview</NavLink>.
      </p>
    </div>
  );
}
