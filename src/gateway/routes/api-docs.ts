// The API's own description: /openapi.json and the Swagger UI under /docs. Both are built on
// first use, in an app of their own that is given every route this app registered (schemas
// only, no handlers), so a start does not load the docs' packages (tens of ms).
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type RouteOptions,
} from 'fastify';
import { VERSION } from '../../version.js';
import { COMPONENTS } from '../schemas/entities.js';
import { withCommonErrors } from '../schemas/describe.js';

/** Headers of the docs' app's answer that this server sets for its own connection. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date']);

async function buildDocs(routes: readonly RouteOptions[]): Promise<FastifyInstance> {
  // Required, not imported: the daemon's bundle leaves them out and runs as CommonJS.
  const require = createRequire(import.meta.url);
  const swagger = require('@fastify/swagger') as typeof import('@fastify/swagger').default;
  const swaggerUi = require('@fastify/swagger-ui') as typeof import('@fastify/swagger-ui').default;
  const docs = Fastify();
  // Nothing is validated or serialized here: the routes are only described.
  docs.setValidatorCompiler(() => () => true);
  docs.setSerializerCompiler(() => (data) => JSON.stringify(data));
  for (const schema of COMPONENTS) docs.addSchema(schema);
  await docs.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'gatehouse',
        version: VERSION,
        description:
          'Task board, dispatcher and platforms. Live events: the websocket GET /events/stream?after=ID&task=ID&kinds=a,b (see docs/api.md). Errors are {"error": {"code", "message"}} with the codes of docs/errors.md.',
        license: { name: 'MIT', identifier: 'MIT' },
        // Whoever runs this gatehouse; the project's docs/ say the rest.
        contact: { name: 'gatehouse' },
      },
      // Relative: the document is served by the gatehouse it describes.
      servers: [{ url: '/', description: 'the gatehouse serving this document' }],
      tags: [
        { name: 'tasks', description: 'The board: tasks and operator transitions' },
        { name: 'workers', description: 'Worker routes, authorised by the run token' },
        { name: 'history', description: 'Runs, events and logs' },
        { name: 'platforms', description: 'Chat and webhook platforms behind their breakers' },
        { name: 'operations', description: 'Health, readiness, metrics, planned stop and restart' },
      ],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'api.token' },
          runToken: {
            type: 'http',
            scheme: 'bearer',
            description: '$GATEHOUSE_RUN_TOKEN of the run',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    refResolver: {
      // Components keep their own names (Task, Run, Error…) instead of def-0, def-1.
      buildLocalReference: (json, _base, _fragment, i) =>
        (json.$id as string | undefined) ?? `def-${i}`,
    },
  });
  await docs.register(swaggerUi, { routePrefix: '/docs' });
  // Described here, served by the app: a docs path that climbs out onto one (/docs/../tasks)
  // finds nothing.
  for (const { method, url, schema } of routes)
    docs.route({
      method,
      url,
      schema: withCommonErrors(String(method), url, schema ?? {}),
      handler: (_req, reply) => reply.callNotFound(),
    });
  await docs.ready();
  return docs;
}

async function text(stream: Readable): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += String(chunk);
  return out;
}

/** The message of a Fastify error body, or the status. */
function messageOf(body: string, status: number): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? `HTTP ${status}`;
  } catch {
    return `HTTP ${status}`;
  }
}

/**
 * Registered before the routes: it keeps what they describe (the websocket route, which OpenAPI
 * cannot describe, and HEAD twins aside) for the docs' app.
 */
export function apiDocs(app: FastifyInstance): void {
  for (const schema of COMPONENTS) app.addSchema(schema);
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    const websocket = (route as { websocket?: boolean }).websocket === true;
    if (!websocket && route.method !== 'HEAD' && !route.schema?.hide) routes.push(route);
  });
  let docs: Promise<FastifyInstance> | null = null;
  // A build that failed (a file it could not read) is tried again by the next request.
  const built = () =>
    (docs ??= buildDocs(routes).catch((err: unknown) => {
      docs = null;
      throw err;
    }));

  app.get('/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () =>
    (await built()).swagger(),
  );
  const forward = async (req: FastifyRequest, reply: FastifyReply) => {
    // Streamed, as the docs' static files were when served by the app itself (1.7 MB for one).
    const res = await (
      await built()
    ).inject({
      method: req.method as 'GET' | 'HEAD',
      url: req.url,
      headers: req.headers,
      payloadAsStream: true,
    });
    // Refusals (a missing file, a path that climbs out) answer as this API's own: not found by
    // its not-found handler, the others in its error format.
    if (res.statusCode === 404) return reply.callNotFound();
    if (res.statusCode >= 400) {
      const message = messageOf(await text(res.stream()), res.statusCode);
      throw Object.assign(new Error(message), { statusCode: res.statusCode });
    }
    for (const [name, value] of Object.entries(res.headers))
      if (!CONNECTION_HEADERS.has(name) && value !== undefined) void reply.header(name, value);
    void reply.code(res.statusCode);
    // No content type, no body (a redirect, 304 Not Modified): nothing is added to it.
    return res.headers['content-type'] === undefined ? reply.send() : reply.send(res.stream());
  };
  // The API description and its viewer are public: they hold no data.
  for (const url of ['/docs', '/docs/*'])
    app.route({
      method: ['GET', 'HEAD'],
      url,
      config: { auth: 'none' },
      schema: { hide: true },
      handler: forward,
    });
}
