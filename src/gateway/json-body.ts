// The one JSON body parser: says precisely what is wrong with a body (not JSON, empty, nested
// deeper than 64 levels, a prototype-poisoning key), each as a 400 a person can act on.
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../kanban/model/json-limits.js';

/** A key that would poison an object's prototype once the body is merged somewhere. */
function poisoned(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Object.hasOwn(node, '__proto__')) return true;
    const ctor = (node as Record<string, unknown>).constructor;
    if (
      Object.hasOwn(node, 'constructor') &&
      typeof ctor === 'object' &&
      ctor !== null &&
      Object.hasOwn(ctor, 'prototype')
    )
      return true;
    for (const child of Object.values(node) as unknown[]) stack.push(child);
  }
  return false;
}

function parseJsonBody(text: string): unknown {
  if (text.trim() === '')
    throw new AppError('BAD_REQUEST', 'body is empty: send a JSON document, or no content-type');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AppError('BAD_REQUEST', `body is not valid JSON (${(err as Error).message})`);
  }
  if (nestedDeeperThan(value))
    throw new AppError('VALIDATION_FAILED', `body: nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (poisoned(value))
    throw new AppError(
      'VALIDATION_FAILED',
      'body: a "__proto__" or "constructor.prototype" key is not accepted',
    );
  return value;
}

export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}
