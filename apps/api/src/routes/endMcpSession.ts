import { mcpNoSession } from '../mcp';
import { route } from './route';

/** DELETE /mcp — 405 once authenticated: a stateless server has no session to end. */
export const endMcpSession = route('endMcpSession', {
  access: 'viewer',
  protocol: 'mcp',
  handlers: mcpNoSession,
});
