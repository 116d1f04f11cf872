// One MCP request over the Streamable HTTP transport, stateless (docs/mcp.md): a server and a
// transport of the official SDK for each POST, with JSON answers, so a restart or another host
// breaks nothing a client holds. The SDK is loaded at the first request, not at start-up.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { VERSION } from '../version.js';
import type { McpCaller, McpService } from './service.js';

type Sdk = Awaited<ReturnType<typeof loadSdk>>;
let sdk: Promise<Sdk> | null = null;

async function loadSdk() {
  const [server, transport, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { ...server, ...transport, ...types };
}

/** Answers one POST /mcp (the response is written and ended here). */
export async function serveMcp(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  caller: McpCaller,
  service: McpService,
): Promise<void> {
  const { Server, StreamableHTTPServerTransport, ListToolsRequestSchema, CallToolRequestSchema } =
    await (sdk ??= loadSdk());
  const server = new Server(
    { name: 'gatehouse', version: VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        caller.kind === 'operator'
          ? 'The gatehouse board: create tasks for its agents, follow them, approve, answer their questions.'
          : 'Your gatehouse task: read it, comment, report progress, make subtasks, ask a person. Your verdict is still your final message.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: service.tools(caller).map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: JSON.parse(JSON.stringify(t.inputSchema)) as { type: 'object' },
      annotations: { readOnlyHint: t.readOnly },
      // Claude Code offers it at once rather than behind its tool search.
      _meta: { 'anthropic/alwaysLoad': true },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const result = await service.call(caller, request.params.name, request.params.arguments);
    return { content: [{ type: 'text' as const, text: result.text }], isError: result.isError };
  });
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } finally {
    await transport.close();
    await server.close();
  }
}
