import { lazy, Suspense, useEffect, useRef, useState } from 'react';
import { Link, Navigate, NavLink, Route, Routes, useLocation, useSearchParams } from 'react-router';
import { Loading } from './components/ui';
import { AcceptInvitation, ResetPassword, SignIn, SignUp, VerifyEmail } from './pages/auth';
import { atLeast } from './roles';
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
const Keys = lazy(() => import('./pages/keys'));
const Members = lazy(() => import('./pages/members'));
const Webhooks = lazy(() => import('./pages/webhooks'));
const WebhookDetail = lazy(() => import('./pages/webhook-detail'));
const Billing = lazy(() => import('./pages/billing'));
const Audit = lazy(() => import('./pages/audit'));
const Settings = lazy(() => import('./pages/settings'));
// Lazy, like every page, and more so: the QR code library loads only with it.
const Security = lazy(() => import('./pages/security'));

/** The pages of a mailed link, the same whether or not a session is open in this browser. */
const LINK_PAGES = new Set(['/verify', '/reset']);

export function App() {
  const session = useSession();
  const location = useLocation();
  if (LINK_PAGES.has(location.pathname)) {
    return (
      <Routes>
        <Route path="/verify" element={<VerifyEmail />} />
        <Route path="/reset" element={<ResetPassword />} />
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
  return <Shell />;
}

interface NavItem {
  to: string;
  label: string;
  show: boolean;
}

function Shell() {
  const session = useSession();
  const role = session.role;
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    setMenuOpen(false);
    main.current?.focus({ preventScroll: true });
  }, [location.pathname]);
  const nav: NavItem[] = [
    { to: '/', label: 'Overview', show: true },
    { to: '/jobs/new', label: 'New job', show: atLeast(role, 'member') },
    { to: '/jobs', label: 'Jobs', show: true },
    { to: '/batches', label: 'Batches', show: true },
    { to: '/schedules', label: 'Schedules', show: true },
    { to: '/keys', label: 'API keys', show: true },
    { to: '/members', label: 'Members', show: true },
    { to: '/webhooks', label: 'Webhooks', show: true },
    { to: '/billing', label: 'Billing', show: true },
    { to: '/audit', label: 'Audit events', show: atLeast(role, 'admin') },
    { to: '/settings', label: 'Settings', show: true },
    { to: '/security', label: 'Security', show: true },
  ];
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">SDX Console</span>
        <WorkspaceSwitcher />
        <button type="button" className="menu-toggle" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen((open) => !open)}>
          Menu
        </button>
      </header>
      <nav id="main-nav" className={menuOpen ? 'sidebar open' : 'sidebar'} aria-label="Console">
        <ul>
          {nav
            .filter((item) => item.show)
            .map((item) => (
              <li key={item.to}>
                <NavLink to={item.to} end={item.to === '/' || item.to === '/jobs'}>
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
        <Suspense fallback={<Loading />}>
          <Routes>
            <Route path="/" element={<Overview />} />
            <Route path="/jobs" element={<Jobs />} />
            <Route path="/jobs/new" element={<NewWork mode="job" />} />
            <Route path="/jobs/:jobId" element={<JobDetail />} />
            <Route path="/batches" element={<Batches />} />
            <Route path="/batches/new" element={<NewWork mode="batch" />} />
            <Route path="/batches/:batchId" element={<BatchDetail />} />
            <Route path="/schedules" element={<Schedules />} />
            <Route path="/schedules/new" element={<ScheduleEdit />} />
            <Route path="/schedules/:scheduleId" element={<ScheduleDetail />} />
            <Route path="/schedules/:scheduleId/edit" element={<ScheduleEdit />} />
            <Route path="/keys" element={<Keys />} />
            <Route path="/members" element={<Members />} />
            <Route path="/webhooks" element={<Webhooks />} />
            <Route path="/webhooks/:webhookId" element={<WebhookDetail />} />
            <Route path="/billing" element={<Billing />} />
            <Route path="/audit" element={<Audit />} />
            <Route path="/settings" element={<Settings />} />
            <Route path="/security" element={<Security />} />
            <Route path="/invitations/accept" element={<AcceptInvitation />} />
            <Route path="/signin" element={<Navigate to="/" replace />} />
            <Route path="/signup" element={<AfterSignUp />} />
            <Route path="*" element={<NotFound />} />
          </Routes>
        </Suspense>
      </main>
    </div>
  );
}

function WorkspaceSwitcher() {
  const session = useSession();
  return (
    <div className="switcher">
      <label htmlFor="workspace-switcher" className="visually-hidden">
        Workspace
      </label>
      <select id="workspace-switcher" value={session.workspace?.id ?? ''} onChange={(event) => session.switchWorkspace(event.target.value)}>
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
      <Link to="/security">turn on two-factor sign-in in your security settings</Link>, or switch to another workspace.
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
  return (
    <div>
      <h1>Page not found</h1>
      <p>
        There is no such page in the console. <NavLink to="/">Go to the overview</NavLink>.
      </p>
    </div>
  );
}
