import { mcpMessage } from '../mcp';
import { route } from './route';

/**
 * POST /mcp — one Model Context Protocol message (Streamable HTTP, stateless), mounted by
 * mcp/index.ts: API keys and OAuth access tokens only, one rate-limit point per message. Any
 * role of the workspace may call; each tool then needs the access of the REST route it stands for.
 */
export const postMcpMessage = route('postMcpMessage', {
  access: 'viewer',
  protocol: 'mcp',
  handlers: mcpMessage,
});
