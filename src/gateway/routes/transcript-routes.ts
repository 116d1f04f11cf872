// A run's transcript (docs/mcp.md): what it printed read by its agent kind's reader, from a byte
// offset on, so that a reader that comes back gets only what was printed since; or pushed over a
// websocket as it prints.
import { dirname } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { agentKind } from '../../agents/kinds.js';
import { transcriptOf } from '../../agents/transcript.js';
import type { AgentConfig } from '../../config/schema.js';
import type { Board } from '../../kanban/board.js';
import { readLogFrom } from '../../kanban/dispatch/run-log.js';
import { runFile } from '../../kanban/dispatch/run-files.js';
import type { Run } from '../../kanban/model/types.js';
import { followTranscript } from '../transcript-stream.js';
import { Type, type Static } from '../../schema-types.js';
import { describe } from '../schemas/describe.js';
import { runWithFiles } from './run-lookup.js';
import { closed, nullable } from '../schemas/parts.js';
import { RunIdParams } from '../schemas/requests.js';

export interface TranscriptRouteDeps {
  board: Board;
  /** The agent kind a profile runs, or null: it runs a command (or this host has no such profile). */
  agentKindOf: (profile: string) => AgentConfig['kind'] | null;
}

const StreamQuery = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: 0 })),
    token: Type.Optional(Type.String({ maxLength: 500 })),
  },
  closed,
);

const TranscriptQuery = Type.Object(
  {
    after: Type.Optional(
      Type.Integer({ minimum: 0, description: 'a byte offset: the `next` of the last answer' }),
    ),
  },
  closed,
);

const cutChars = Type.Integer({ minimum: 0, description: 'characters cut from its end' });
const entry = (kind: string, fields: Parameters<typeof Type.Object>[0]) =>
  Type.Object({ kind: Type.Literal(kind), ...fields }, closed);
const Transcript = Type.Object(
  {
    kind: Type.Union([Type.Literal('claude'), Type.Literal('codex'), Type.Null()], {
      description: 'the agent kind that read it, or null: a command’s run, shown line by line',
    }),
    entries: Type.Array(
      Type.Union([
        entry('text', { text: Type.String(), cut: cutChars }),
        entry('tool_call', {
          id: nullable(Type.String()),
          tool: Type.String(),
          input: Type.String(),
          cut: cutChars,
        }),
        entry('tool_result', {
          id: nullable(Type.String()),
          output: Type.String(),
          error: Type.Boolean(),
          cut: cutChars,
        }),
        entry('question', { text: Type.String(), options: nullable(Type.Array(Type.String())) }),
        entry('progress', { note: Type.String(), percent: nullable(Type.Number()) }),
        entry('error', { text: Type.String(), cut: cutChars }),
        entry('log', { text: Type.String(), cut: cutChars }),
      ]),
    ),
    next: Type.Integer({ minimum: 0, description: 'the `after` of the next request' }),
    ended: Type.Boolean({ description: 'the run ended and everything it printed was read' }),
  },
  closed,
);

function isKind(kind: string | null | undefined): kind is AgentConfig['kind'] {
  return kind === 'claude' || kind === 'codex';
}

export function transcriptRoutes(app: FastifyInstance, deps: TranscriptRouteDeps): void {
  app.get<{ Params: Static<typeof RunIdParams>; Querystring: Static<typeof TranscriptQuery> }>(
    '/runs/:runId/transcript',
    {
      schema: {
        params: RunIdParams,
        querystring: TranscriptQuery,
        ...describe({
          tag: 'history',
          id: 'getRunTranscript',
          summary: 'A run’s transcript, readable',
          description:
            'What the run’s agent said and did, read from what it printed (its JSON lines) by its kind (claude, codex): its messages, each tool call with its input and its output (cut past 16,384 characters, `cut` saying how many), its questions and progress notes, its errors; a line that is not its agent’s JSON, and every line of a command’s run, as `log`. At most 1 MiB of the log an answer; ask again with `after` set to `next` for what came since. 404 for an unknown run, or one whose files retention removed.',
          ok: { 200: Transcript },
          errors: [404],
        }),
      },
    },
    async (req) => {
      const { run, kind, path } = await source(deps, req.params.runId);
      const ended = run.endedAt !== null;
      const chunk = await readLogFrom(path, req.query.after ?? 0, ended);
      return {
        kind,
        entries: transcriptOf(kind ? agentKind(kind) : null, chunk.text),
        next: chunk.next,
        ended: ended && chunk.next >= chunk.size,
      };
    },
  );

  // The same, pushed as the agent prints (websocket; hidden from the OpenAPI document as
  // /events/stream is): each message one answer as above, closed with 1000 once `ended`.
  app.register(async (scope) => {
    scope.get<{ Params: Static<typeof RunIdParams>; Querystring: Static<typeof StreamQuery> }>(
      '/runs/:runId/transcript/stream',
      {
        websocket: true,
        schema: { params: RunIdParams, querystring: StreamQuery, hide: true },
        // Refused before the upgrade: an unknown run is a 404, not a silent socket.
        preValidation: async (req) => {
          sources.set(req, await source(deps, req.params.runId));
        },
      },
      (socket, req) => {
        const { run, kind, path } = sources.get(req)!;
        followTranscript(socket, {
          board: deps.board,
          runId: run.id,
          path,
          kind: kind ? agentKind(kind) : null,
          kindName: kind,
          after: req.query.after ?? 0,
        });
      },
    );
  });
}

interface Source {
  run: Run;
  kind: AgentConfig['kind'] | null;
  /**
   * The file it reads: an agent's JSON lines are its stdout (agent.jsonl beside the log, which
   * has its stderr); a command's run, its log.
   */
  path: string;
}

const sources = new WeakMap<FastifyRequest, Source>();

/** The run, the kind that reads what it printed, and where that is; 404 for none. */
async function source(deps: TranscriptRouteDeps, runId: string): Promise<Source> {
  const run = await runWithFiles(deps.board, runId);
  // An ended agent run says its kind; a live one is its profile's.
  const recorded = run.agent?.kind;
  const kind = isKind(recorded) ? recorded : deps.agentKindOf(run.profile);
  const path = kind ? runFile(dirname(run.logPath), 'agent.jsonl') : run.logPath;
  return { run, kind, path };
}
