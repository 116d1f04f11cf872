// One MCP request over the Streamable HTTP transport, stateless (docs/mcp.md): a server and a
// transport of the official SDK for each POST (its web-standard one, given the body Fastify
// read: no stream to convert), with JSON answers, so a restart or another host
// breaks nothing a client holds. The SDK is loaded at the first request, not at start-up.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { VERSION } from '../version.js';
import type { McpCaller, McpService } from './service.js';

type Sdk = Awaited<ReturnType<typeof loadSdk>>;
let sdk: Promise<Sdk> | null = null;

async function loadSdk() {
  const [server, transport, types, ajv] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/validation/ajv'),
  ]);
  // One for every request's server: a server makes its own Ajv otherwise (a quarter of a call's
  // time), for elicitation, which gatehouse never asks for.
  const validator = new ajv.AjvJsonSchemaValidator();
  return { ...server, ...transport, ...types, validator };
}

/** Answers one POST /mcp (the response is written and ended here). */
export async function serveMcp(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  caller: McpCaller,
  service: McpService,
): Promise<void> {
  const {
    Server,
    WebStandardStreamableHTTPServerTransport,
    ListToolsRequestSchema,
    CallToolRequestSchema,
    validator,
  } = await (sdk ??= loadSdk());
  const server = new Server(
    { name: 'gatehouse', version: VERSION },
    {
      capabilities: { tools: {} },
      jsonSchemaValidator: validator,
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
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  try {
    await server.connect(transport);
    // The body Fastify parsed, and the request's headers: all the transport reads of it.
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/mcp'}`, {
      method: req.method ?? 'POST',
      headers,
    });
    const response = await transport.handleRequest(request, { parsedBody: body });
    const answer = Buffer.from(await response.arrayBuffer());
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(answer);
  } finally {
    await transport.close();
    await server.close();
  }
}
