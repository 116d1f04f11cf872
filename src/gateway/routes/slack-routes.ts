// Slack's Events API: POST /platform/:name/events, signed with the app's signing secret; the
// url_verification challenge answered; a message event handled once by its event_id, whatever
// Slack's retries (X-Slack-Retry-Num) repeat. Any host of the board may receive it.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.js';
import type { Platforms } from '../../platforms/platforms.js';
import { slackMessage } from '../../platforms/slack.js';
import {
  SLACK_SIGNATURE_HEADER,
  SLACK_TIMESTAMP_HEADER,
  slackRefusal,
} from '../../platforms/slack-signature.js';
import { Type, type Static } from '../../schema-types.js';
import { describe } from '../schemas/describe.js';

const NameParams = Type.Object(
  { name: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);
/** Slack's events are small; a message is at most 40,000 characters. */
const EVENTS_LIMIT = 256 * 1024;
const EventsAnswer = Type.Object(
  {
    challenge: Type.Optional(Type.String()),
    duplicate: Type.Optional(Type.Boolean()),
    taskId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: false },
);

function header(req: { headers: Record<string, string | string[] | undefined> }, name: string) {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

export function slackRoutes(app: FastifyInstance, platforms: Platforms): void {
  // The signature covers the raw body: this scope parses JSON itself, after verifying it.
  app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: EVENTS_LIMIT },
      (_req, body, done) => done(null, body),
    );
    scope.post<{ Params: Static<typeof NameParams>; Body: Buffer }>(
      '/platform/:name/events',
      {
        config: { auth: 'none' },
        bodyLimit: EVENTS_LIMIT,
        schema: {
          params: NameParams,
          ...describe({
            tag: 'platforms',
            id: 'receiveSlackEvent',
            summary: "Slack's Events API (signed with the app's signing secret)",
            description:
              'Needs no token: the signature is checked instead. Answers url_verification challenges; a message creates its task once, however often Slack retries it. 503 while the platform is paused.',
            ok: { 200: EventsAnswer },
            errors: [
              { status: 401, reason: 'a missing or wrong signature, or a stale timestamp' },
              404,
            ],
            public: true,
          }),
        },
      },
      async (req) => {
        const config = platforms.config(req.params.name);
        const secret = config.options.signingSecret;
        if (config.type !== 'slack' || !config.enabled || typeof secret !== 'string')
          throw new AppError(
            'NOT_FOUND',
            `platform ${config.name} takes no Slack events${config.enabled ? '' : ' (it is disabled)'}`,
          );
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const refusal = slackRefusal(
          secret,
          header(req, SLACK_TIMESTAMP_HEADER),
          header(req, SLACK_SIGNATURE_HEADER),
          raw,
          platforms.clock.wall() / 1000,
        );
        if (refusal) throw new AppError('UNAUTHORIZED', refusal);
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
        } catch {
          throw new AppError('BAD_REQUEST', 'body is not valid JSON');
        }
        if (body.type === 'url_verification' && typeof body.challenge === 'string')
          return { challenge: body.challenge };
        const message = body.type === 'event_callback' ? slackMessage(body.event) : null;
        // Anything else (a bot's message, an edit, an event not subscribed to) changes nothing.
        if (!message || typeof body.event_id !== 'string') return {};
        if (platforms.get(config.name).view().state === 'paused')
          throw new AppError('PLATFORM_UNAVAILABLE', `platform ${config.name} is paused`, {
            headers: { 'retry-after': '60' },
          });
        const result = await platforms.receive(
          config.name,
          { id: body.event_id, signature: 'slack' },
          message,
        );
        return { duplicate: result.duplicate, taskId: result.taskId };
      },
    );
  });
}
