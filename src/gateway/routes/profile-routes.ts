// A profile's rate-limit hold, ended early by an operator (docs/agents.md).
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.js';
import type { Board } from '../../kanban/board.js';
import { releaseHold } from '../../kanban/moves/profile-hold.js';
import { Type, type Static } from '../../schema-types.js';
import { describe } from '../schemas/describe.js';
import { closed } from '../schemas/parts.js';

export interface ProfileRouteDeps {
  board: Board;
  /** The profiles this host runs. */
  profileNames: () => string[];
}

const ProfileParams = Type.Object(
  { name: Type.String({ pattern: '^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$' }) },
  closed,
);

const ReleaseAnswer = Type.Object(
  {
    profile: Type.String(),
    released: Type.Boolean({ description: 'false: it was not held' }),
  },
  closed,
);

export function profileRoutes(app: FastifyInstance, deps: ProfileRouteDeps): void {
  app.post<{ Params: Static<typeof ProfileParams> }>(
    '/profiles/:name/release',
    {
      schema: {
        params: ProfileParams,
        ...describe({
          tag: 'operations',
          id: 'releaseProfile',
          summary: 'End a profile’s rate-limit hold',
          description:
            'A rate-limited agent run holds its profile until the reset the agent reported (`profile_held`); this ends the hold now, on every host, and its tasks may start at once. 404 for a profile that is neither run here nor held.',
          ok: { 200: ReleaseAnswer },
          errors: [404],
        }),
      },
    },
    async (req) => {
      const { name } = req.params;
      const released = await deps.board.transact((tx) => releaseHold(tx, name, 'api'));
      if (!released && !deps.profileNames().includes(name))
        throw new AppError('PROFILE_NOT_FOUND', `no profile named "${name}"`);
      return { profile: name, released };
    },
  );
}
