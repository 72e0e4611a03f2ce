import { mcpNoStream } from '../mcp';
import { route } from './route';

/** GET /mcp — 405 once authenticated: a stateless server has no session's event stream. */
export const openMcpStream = route('openMcpStream', {
  access: 'viewer',
  protocol: 'mcp',
  handlers: mcpNoStream,
});
