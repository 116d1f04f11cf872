// POST /mcp: gatehouse's MCP endpoint (docs/mcp.md), the Streamable HTTP transport, stateless.
// It authenticates itself: a run's own token, or the API token. Not in the OpenAPI document: an
// MCP client reads its tools from the endpoint.
import type { FastifyInstance } from 'fastify';
import { AppError, BEARER_CHALLENGE } from '../../errors.js';
import { serveMcp } from '../../mcp/server.js';
import type { McpService } from '../../mcp/service.js';
import { bearerToken } from '../auth.js';

const NOT_ALLOWED = JSON.stringify({
  jsonrpc: '2.0',
  error: { code: -32000, message: 'Method not allowed: POST only (stateless, no stream)' },
  id: null,
});

export function mcpRoutes(app: FastifyInstance, service: McpService): void {
  app.post('/mcp', { config: { auth: 'none' }, schema: { hide: true } }, async (req, reply) => {
    const caller = await service.caller(bearerToken(req));
    if (!caller)
      throw new AppError(
        'UNAUTHORIZED',
        'this endpoint needs Authorization: Bearer <a run’s GATEHOUSE_MCP_TOKEN, or the API token>',
        { headers: { 'www-authenticate': BEARER_CHALLENGE } },
      );
    reply.hijack();
    try {
      await serveMcp(req.raw, reply.raw, req.body, caller, service);
    } catch (err) {
      req.log.error({ err }, 'MCP request failed');
      if (!reply.raw.headersSent)
        reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32603, message: 'internal error' },
            id: null,
          }),
        );
      else reply.raw.end();
    }
  });
  // No server-sent stream and no session to end: stateless.
  for (const method of ['GET', 'DELETE'] as const)
    app.route({
      method,
      url: '/mcp',
      config: { auth: 'none' },
      schema: { hide: true },
      handler: (_req, reply) =>
        reply.code(405).header('allow', 'POST').type('application/json').send(NOT_ALLOWED),
    });
}
