// Local doubles of the two model providers the agent CLIs talk to, each following its API's
// documented streaming format: Anthropic's Messages API (POST /v1/messages, SSE events
// message_start … message_stop) and OpenAI's Responses API (POST /v1/responses, SSE events
// response.created … response.completed). What each request is answered with comes from a
// script the test sets: a text reply, a tool call, an HTTP error (with retry-after), or a stream
// that stalls. Requests are recorded, so a test can read what the agent sent.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen, readBody } from './doubles.js';

/** The tokens an answer reports (its API's usage); absent: the double's own figures. */
export interface AnswerUsage {
  input?: number;
  output?: number;
}

export type Reply =
  | { text: string; usage?: AnswerUsage }
  /**
   * A tool call: Claude's tool name and input, or codex's function name and arguments (with the
   * namespace codex offers an MCP server's tools in, `mcp__<server>`).
   */
  | { tool: string; input: Record<string, unknown>; namespace?: string; usage?: AnswerUsage }
  /** An HTTP error: the API's error body with `message`, or `body` as it is. */
  | { status: number; headers?: Record<string, string>; message?: string; body?: unknown }
  /** Starts the stream and never ends it. */
  | { hang: true };

export interface ModelRequest {
  body: Record<string, unknown>;
  /** The whole body as text, for "does the prompt reach the model" checks. */
  text: string;
}

export interface ModelDouble {
  /** The API's base without /v1 (ANTHROPIC_BASE_URL), or with it (a codex provider's base_url). */
  url: string;
  /** Every request to the main endpoint, in order. */
  requests: ModelRequest[];
  /** How a request is answered: called with the request and its index among the conversation's. */
  script: (req: ModelRequest, turn: number) => Reply;
  /** Ends stalled streams (a test's cleanup does it anyway). */
  release(): void;
}

const USAGE = { input: 120, output: 30, cached: 20 };

function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** The tool results already sent back in this conversation: the turn the model is on. */
function turnOf(body: Record<string, unknown>, resultType: string): number {
  const items = (body.messages ?? body.input) as unknown[] | undefined;
  if (!Array.isArray(items)) return 0;
  let n = 0;
  for (const item of items) {
    const i = item as { type?: string; content?: unknown };
    if (i.type === resultType) n++;
    if (Array.isArray(i.content))
      n += i.content.filter((c) => (c as { type?: string }).type === resultType).length;
  }
  return n;
}

async function double(
  path: string,
  resultType: string,
  answer: (req: ModelRequest, reply: Reply, res: ServerResponse, n: number) => void,
  side: (body: Record<string, unknown>) => boolean,
  errorBody: (status: number, message: string) => unknown,
  urlSuffix = '',
): Promise<ModelDouble> {
  const stalled = new Set<ServerResponse>();
  let replies = 0;
  const d: ModelDouble = {
    url: '',
    requests: [],
    script: () => ({ text: 'done' }),
    release() {
      for (const res of stalled) res.destroy();
      stalled.clear();
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void readBody(req).then((raw) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method !== 'POST' || url.pathname !== path) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const request = { body, text: raw.toString('utf8') };
      // Claude Code's own small requests (a title, a quota check) are answered, not scripted.
      if (side(body)) {
        answer(request, { text: 'ok' }, res, replies++);
        return;
      }
      d.requests.push(request);
      const reply = d.script(request, turnOf(body, resultType));
      if ('status' in reply) {
        res
          .writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers })
          .end(
            JSON.stringify(
              reply.body ?? errorBody(reply.status, reply.message ?? `error ${reply.status}`),
            ),
          );
        return;
      }
      if ('hang' in reply) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.flushHeaders();
        stalled.add(res);
        res.on('close', () => stalled.delete(res));
        return;
      }
      answer(request, reply, res, replies++);
    });
  });
  d.url = `${await listen(server, () => d.release())}${urlSuffix}`;
  return d;
}

/** Anthropic's Messages API, as Claude Code calls it (always streaming). */
export function anthropicDouble(): Promise<ModelDouble> {
  return double(
    '/v1/messages',
    'tool_result',
    (_req, reply, res, n) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const id = `msg_${n}`;
      sse(res, 'message_start', {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: 'claude-double',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: ('usage' in reply ? reply.usage : undefined)?.input ?? USAGE.input,
            output_tokens: 1,
            cache_read_input_tokens: USAGE.cached,
            cache_creation_input_tokens: 0,
          },
        },
      });
      if ('text' in reply) {
        sse(res, 'content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        });
        sse(res, 'content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: reply.text },
        });
      } else if ('tool' in reply) {
        sse(res, 'content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: `toolu_${n}`, name: reply.tool, input: {} },
        });
        sse(res, 'content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.input) },
        });
      }
      sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
      sse(res, 'message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'tool' in reply ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: {
          output_tokens: ('usage' in reply ? reply.usage : undefined)?.output ?? USAGE.output,
        },
      });
      sse(res, 'message_stop', { type: 'message_stop' });
      res.end();
    },
    // Its side requests carry no tools.
    (body) => !Array.isArray(body.tools) || body.tools.length === 0,
    (status, message) => ({
      type: 'error',
      error: {
        type:
          status === 429
            ? 'rate_limit_error'
            : status === 529
              ? 'overloaded_error'
              : status === 401
                ? 'authentication_error'
                : 'api_error',
        message,
      },
    }),
  );
}

/** OpenAI's Responses API, as the Codex CLI calls it (`wire_api = "responses"`, streaming). */
export function openaiDouble(): Promise<ModelDouble> {
  return double(
    '/v1/responses',
    'function_call_output',
    (_req, reply, res, n) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const id = `resp_${n}`;
      const response = { id, object: 'response', status: 'in_progress', output: [] as unknown[] };
      sse(res, 'response.created', { type: 'response.created', response });
      const item =
        'text' in reply
          ? {
              type: 'message',
              id: `msg_${n}`,
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: reply.text, annotations: [] }],
            }
          : {
              type: 'function_call',
              id: `fc_${n}`,
              call_id: `call_${n}`,
              name: 'tool' in reply ? reply.tool : 'none',
              ...('tool' in reply && reply.namespace ? { namespace: reply.namespace } : {}),
              arguments: JSON.stringify('tool' in reply ? reply.input : {}),
              status: 'completed',
            };
      sse(res, 'response.output_item.added', {
        type: 'response.output_item.added',
        output_index: 0,
        item,
      });
      sse(res, 'response.output_item.done', {
        type: 'response.output_item.done',
        output_index: 0,
        item,
      });
      sse(res, 'response.completed', {
        type: 'response.completed',
        response: {
          ...response,
          status: 'completed',
          output: [item],
          usage: {
            input_tokens: ('usage' in reply ? reply.usage : undefined)?.input ?? USAGE.input,
            input_tokens_details: { cached_tokens: USAGE.cached },
            output_tokens: ('usage' in reply ? reply.usage : undefined)?.output ?? USAGE.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens:
              (('usage' in reply ? reply.usage : undefined)?.input ?? USAGE.input) +
              (('usage' in reply ? reply.usage : undefined)?.output ?? USAGE.output),
          },
        },
      });
      res.end();
    },
    () => false,
    (status, message) => ({ error: { type: 'error', code: String(status), message } }),
    '/v1',
  );
}
