// /platform: adapters' state and breakers, operator control, sends, and signed inbound webhooks.
import { Type, type Static } from '../../schema-types.js';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.js';
import type { Platforms } from '../../platforms/platforms.js';
import { Platform, PlatformList } from '../schemas/entities.js';
import { describe } from '../schemas/describe.js';
import {
  ID_HEADER,
  MAX_SKEW_SECONDS,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  secretKey,
  verifySignature,
} from '../../platforms/webhook-signature.js';

const NameParams = Type.Object(
  { name: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);
const SendBody = Type.Object(
  {
    channel: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    text: Type.String({ minLength: 1, maxLength: 4000 }),
  },
  { additionalProperties: false },
);
const INBOUND_LIMIT = 64 * 1024;
const SendResult = Type.Object(
  { sent: Type.Boolean(), channel: Type.String() },
  { additionalProperties: false },
);
const InboundResult = Type.Object(
  {
    accepted: Type.Boolean(),
    duplicate: Type.Boolean(),
    taskId: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

type P = Static<typeof NameParams>;

function parseInbound(raw: Buffer): { channel: string; text: string; user?: string } {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AppError('BAD_REQUEST', 'body is not valid JSON');
  }
  const v = value as Record<string, unknown> | null;
  const ok =
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.keys(v).every((k) => k === 'channel' || k === 'text' || k === 'user') &&
    (v.user === undefined ||
      (typeof v.user === 'string' && v.user.length > 0 && v.user.length <= 200)) &&
    typeof v.channel === 'string' &&
    v.channel.length > 0 &&
    v.channel.length <= 200 &&
    typeof v.text === 'string' &&
    v.text.length > 0 &&
    v.text.length <= 4000;
  if (!ok)
    throw new AppError(
      'VALIDATION_FAILED',
      'body must be {"channel": string, "text": string, "user"?: string} and nothing else',
    );
  const message = { channel: v.channel as string, text: v.text as string };
  return typeof v.user === 'string' ? { ...message, user: v.user } : message;
}

const ACTION_DESCRIPTIONS = {
  pause: 'Stops polling and sending until resumed; inbound webhooks answer 503 meanwhile.',
  resume: 'Starts polling and sending again, with the breaker reset.',
  reconnect: 'Drops the connection and connects anew, with the breaker reset.',
} as const;

export function platformRoutes(app: FastifyInstance, platforms: Platforms): void {
  app.get(
    '/platform',
    {
      schema: describe({
        tag: 'platforms',
        id: 'listPlatforms',
        summary: 'Every platform: state, breaker, counters',
        description:
          'Each configured chat or webhook platform with its connection state (standby on a host that does not hold it), its circuit breaker and its message counters.',
        ok: { 200: PlatformList },
      }),
    },
    () => ({ platforms: platforms.views() }),
  );
  app.get<{ Params: P }>(
    '/platform/:name',
    {
      schema: {
        params: NameParams,
        ...describe({
          tag: 'platforms',
          id: 'getPlatform',
          summary: 'One platform',
          description: 'The platform’s state, breaker and counters, as in the list.',
          ok: { 200: Platform },
          errors: [404],
        }),
      },
    },
    (req) => platforms.get(req.params.name).view(),
  );

  for (const action of ['pause', 'resume', 'reconnect'] as const) {
    app.post<{ Params: P }>(
      `/platform/:name/${action}`,
      {
        schema: {
          params: NameParams,
          ...describe({
            tag: 'platforms',
            id: `${action}Platform`,
            summary: `${action[0]!.toUpperCase()}${action.slice(1)} a platform (resume and reconnect reset its breaker)`,
            description: ACTION_DESCRIPTIONS[action],
            ok: { 200: Platform },
            errors: [
              404,
              { status: 503, reason: 'the platform is on standby here: another host holds it' },
            ],
          }),
        },
      },
      async (req) => {
        const supervisor = platforms.get(req.params.name);
        supervisor[action]();
        // Answered once the events it wrote (platform_paused, breaker_closed…) are committed.
        await platforms.recorded();
        return supervisor.view();
      },
    );
  }

  app.post<{ Params: P; Body: Static<typeof SendBody> }>(
    '/platform/:name/send',
    {
      schema: {
        params: NameParams,
        body: SendBody,
        ...describe({
          tag: 'platforms',
          id: 'sendToPlatform',
          summary: 'Send a message through the platform’s breaker',
          description:
            'Sends `text` to `channel` (else the platform’s homeChannel). 503 with Retry-After while the breaker is open, the platform paused, rate limited or on standby.',
          ok: { 200: SendResult },
          errors: [404],
        }),
      },
    },
    async (req) => {
      const channel = req.body.channel ?? platforms.config(req.params.name).homeChannel;
      if (!channel)
        throw new AppError(
          'VALIDATION_FAILED',
          `platform ${req.params.name} has no homeChannel: give a channel`,
        );
      try {
        await platforms.get(req.params.name).send(channel, req.body.text);
      } finally {
        // A failed send may have opened the breaker: its event is committed before the answer.
        await platforms.recorded();
      }
      return { sent: true, channel };
    },
  );

  // The signature covers the raw body, so this route parses JSON itself, after verifying it.
  app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: INBOUND_LIMIT },
      (_req, body, done) => done(null, body),
    );
    scope.post<{ Params: P; Body: Buffer }>(
      '/platform/:name/inbound',
      {
        config: { auth: 'none' },
        bodyLimit: INBOUND_LIMIT,
        schema: {
          params: NameParams,
          ...describe({
            tag: 'platforms',
            id: 'receiveWebhook',
            summary:
              'A signed inbound webhook delivery (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature)',
            description:
              'Needs no token: the signature is checked instead. 202 creates the task once; a delivery whose webhook-id was seen before answers 200 with the same task. 503 while the platform is paused.',
            ok: { 202: InboundResult, 200: InboundResult },
            errors: [
              {
                status: 401,
                reason: 'a missing or wrong signature, or a timestamp out of the tolerance',
              },
              404,
            ],
            public: true,
          }),
        },
      },
      async (req, reply) => {
        const config = platforms.config(req.params.name);
        if (config.type !== 'webhook' || !config.enabled)
          throw new AppError(
            'NOT_FOUND',
            `platform ${config.name} takes no inbound webhooks${config.enabled ? '' : ' (it is disabled)'}`,
          );
        const delivery = verifiedDelivery(
          req.headers,
          req.body,
          config.options.secret as string,
          platforms.clock.wall(),
        );
        if (platforms.get(config.name).view().state === 'paused')
          throw new AppError('PLATFORM_UNAVAILABLE', `platform ${config.name} is paused`, {
            headers: { 'retry-after': '60' },
          });
        const result = await platforms.receive(config.name, delivery, parseInbound(delivery.body));
        return reply
          .code(result.duplicate ? 200 : 202)
          .send({ accepted: true, duplicate: result.duplicate, taskId: result.taskId });
      },
    );
  });
}

/**
 * The delivery's id and body once its timestamp is fresh and its signature over
 * "<id>.<timestamp>.<raw body>" is right; 401 otherwise, saying which.
 */
function verifiedDelivery(
  headers: Record<string, string | string[] | undefined>,
  body: unknown,
  secret: string,
  /** Now, by the daemon's wall clock. */
  nowMs: number,
): { id: string; signature: string; body: Buffer } {
  const raw = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
  const header = (name: string) => {
    const value = headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  const timestamp = header(TIMESTAMP_HEADER);
  const id = header(ID_HEADER);
  if (!timestamp || !/^\d{1,12}$/.test(timestamp))
    throw new AppError('UNAUTHORIZED', `missing or malformed ${TIMESTAMP_HEADER} (unix seconds)`);
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS)
    throw new AppError(
      'UNAUTHORIZED',
      `${TIMESTAMP_HEADER} is more than ${MAX_SKEW_SECONDS} s off`,
    );
  if (!id || !/^[\x21-\x7e]{1,200}$/.test(id))
    throw new AppError(
      'UNAUTHORIZED',
      `missing or malformed ${ID_HEADER} (1-200 visible ASCII characters)`,
    );
  const signature = header(SIGNATURE_HEADER);
  // The configuration refused a secret of any other form at start.
  if (!signature || !verifySignature(secretKey(secret)!, id, timestamp, raw, signature))
    throw new AppError('UNAUTHORIZED', `missing or wrong ${SIGNATURE_HEADER}`);
  return { id, signature, body: raw };
}
