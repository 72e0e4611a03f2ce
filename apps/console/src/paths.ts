import { useCallback } from 'react';
import { type NavigateOptions, useNavigate } from 'react-router';
import { useSession } from './session';

/**
 * The console's URLs carry the workspace: `/console/w/{workspace_id}/jobs/{job_id}`, so a link
 * shared with a teammate opens the workspace it belongs to. Pages link with workspace-relative
 * paths (`/jobs/…`) through `useAt`, which puts the chosen workspace in front.
 */
export function workspacePath(workspaceId: string, path: string): string {
  return `/w/${encodeURIComponent(workspaceId)}${path.startsWith('/') ? path : `/${path}`}`;
}

/** `at('/jobs/job_1')` → `/w/{the chosen workspace}/jobs/job_1`. */
export function useAt(): (path: string) => string {
  const id = useSession().workspace?.id ?? null;
  return useCallback((path: string) => (id ? workspacePath(id, path) : path), [id]);
}

/** The part of a console path after `/w/{workspace_id}` (the whole path when it names no workspace). */
export function withinWorkspace(pathname: string): string {
  const match = /^\/w\/[^/]+(\/.*)?$/.exec(pathname);
  return match ? (match[1] ?? '/') : pathname;
}

/**
 * Where switching to another workspace goes from this page: the same page when it is a list or
 * a form of the workspace (`/jobs`, `/jobs/new`, `/billing`), its list when it is one thing of
 * the old workspace (`/jobs/{id}`, `/schedules/{id}/edit`), which the other workspace has not.
 */
export function switchedPath(pathname: string, workspaceId: string): string {
  const inside = withinWorkspace(pathname);
  const parts = inside.split('/').filter(Boolean);
  const kept = parts.length >= 2 && !(parts.length === 2 && parts[1] === 'new') ? `/${parts[0]}` : inside;
  return workspacePath(workspaceId, pathname.startsWith('/w/') ? kept : '/');
}

/** `navigate('/jobs/job_1')` within the chosen workspace, as `useAt` builds links. */
export function useWorkspaceNavigate(): (path: string, options?: NavigateOptions) => void {
  const at = useAt();
  const navigate = useNavigate();
  return useCallback((path: string, options?: NavigateOptions) => void navigate(at(path), options), [at, navigate]);
}
