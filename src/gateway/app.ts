// buildApp: assembles the Fastify app from its dependencies; it never listens.
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import { AppError, ERROR_STATUS } from '../errors.js';
import { healthRoutes, type ReadyReport } from './health-routes.js';
import { validatorCompiler } from './validation.js';

export interface AppDeps {
  logger: FastifyBaseLogger;
  bodyLimitBytes: number;
  readiness: () => ReadyReport;
}

function errorBody(code: string, message: string) {
  return { error: { code, message } };
}

/** Maps every error to `{error: {code, message}}`; 5xx bodies say nothing internal. */
function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | AppError, req, reply) => {
    if (err instanceof AppError) {
      return reply.code(err.status).headers(err.headers).send(errorBody(err.code, err.message));
    }
    if (err.validation) {
      return reply
        .code(400)
        .send(
          errorBody(
            'VALIDATION_FAILED',
            `${err.validationContext ?? 'request'}${err.message.replace(/^(body|querystring|params|headers)/, '')}`,
          ),
        );
    }
    if (err.statusCode === 413 || err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send(errorBody('PAYLOAD_TOO_LARGE', 'request body is too large'));
    }
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(415).send(errorBody('UNSUPPORTED_MEDIA_TYPE', 'send application/json'));
    }
    if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send(errorBody('BAD_REQUEST', err.message));
    }
    req.log.error({ err }, 'request failed');
    return reply.code(ERROR_STATUS.INTERNAL).send(errorBody('INTERNAL', 'internal error'));
  });
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send(errorBody('NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0]}`)),
  );
}

export function buildApp(deps: AppDeps): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: deps.bodyLimitBytes,
    forceCloseConnections: 'idle',
  });
  app.setValidatorCompiler(validatorCompiler);
  installErrorHandling(app);
  healthRoutes(app, deps.readiness);
  return app;
}
