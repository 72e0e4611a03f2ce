import { Link, type LinkProps } from 'react-router';
import { useAt } from '../paths';

/** A link to a page of the chosen workspace: `to="/jobs/job_1"` opens `/w/{workspace_id}/jobs/job_1`. */
export function WorkspaceLink({ to, ...props }: Omit<LinkProps, 'to'> & { to: string }) {
  const at = useAt();
  return <Link to={at(to)} {...props} />;
}
