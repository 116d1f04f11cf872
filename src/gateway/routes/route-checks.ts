// What several routes check of a request the same way: who made it, and an assignee some host runs.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { Origin } from '../../kanban/model/types.js';

export function originOf(req: FastifyRequest): Origin {
  return req.headers['x-gatehouse-client'] === 'cli' ? { kind: 'cli' } : { kind: 'api' };
}

export async function checkAssignee(
  served: () => Promise<readonly string[]>,
  assignee: string | null | undefined,
): Promise<void> {
  if (!assignee) return;
  const profiles = await served();
  if (!profiles.includes(assignee)) {
    throw new AppError(
      'VALIDATION_FAILED',
      `assignee "${assignee}" is not a worker profile (${profiles.join(', ')})`,
    );
  }
}
