// POST /auth/login: the dashboard's one-time login link exchanged for the API's token, once.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.js';
import { Type, type Static } from '../../schema-types.js';
import type { LoginCodes } from '../api-token.js';
import { describe } from '../schemas/describe.js';

const LoginBody = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
const LoginAnswer = Type.Object({ token: Type.String() }, { additionalProperties: false });

export function loginRoutes(app: FastifyInstance, codes: LoginCodes, token: string | null): void {
  app.post<{ Body: Static<typeof LoginBody> }>(
    '/auth/login',
    {
      config: { auth: 'none' },
      schema: {
        body: LoginBody,
        ...describe({
          tag: 'operations',
          id: 'login',
          summary: "Exchange the start's one-time login link for the API token",
          description:
            'Needs no token: the code of the login link the daemon printed at its start (`/#login=CODE`), good once, is answered with the API token the daemon made for itself (docs/sandbox.md). Any other code is 401.',
          ok: { 200: LoginAnswer },
          errors: [{ status: 401, reason: 'a code that is not one, or was used' }],
          public: true,
        }),
      },
    },
    (req) => {
      if (token === null || !codes.redeem(req.body.code))
        throw new AppError('UNAUTHORIZED', 'this login link is not valid (each works once)');
      return { token };
    },
  );
}
