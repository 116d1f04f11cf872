// Opening the board on the configured engine: SQLite in the data dir, or a PostgreSQL schema.
// What an operator must fix (a board from a newer gatehouse, a refused password, a database
// that does not exist) is a StoreConfigError; a server that is not up yet is waited for.
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import type { StoreConfig } from '../../config/schema.js';
import type { BoardStore } from './contract.js';
import { DatabaseError } from './sqlite/db.js';
import { openStore } from './sqlite/store.js';
import { redactUrl } from './url.js';

/** The board cannot be opened until the operator changes something. */
export class StoreConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreConfigError';
  }
}

export interface OpenHooks {
  /** A row an upgrade had to repair (SQLite boards of older versions). */
  onRepair: (note: string) => void;
  /** The database could not be reached; tried again after `delayMs`. */
  onRetry: (err: unknown, delayMs: number) => void;
  /** An idle PostgreSQL connection failed (the pool replaces it). */
  onIdleError: (err: Error) => void;
  /** The daemon's: wait while a daemon of an older version serves the board (PostgreSQL). */
  olderDaemons?: { onWait: (why: string) => void; onError: (err: unknown) => void };
}

/** Waits between attempts to reach a database that is not up yet, at most this long. */
const MAX_RETRY_MS = 30_000;

/** SQLSTATEs an operator must act on: a refused login, no such database, no privilege. */
const OPERATORS_TO_FIX: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the login was refused',
  '3D000': 'the database does not exist',
  '42501': 'the user lacks a privilege it needs (CREATE on the database, or on the schema)',
};

export async function openBoard(
  store: StoreConfig,
  dataDir: string,
  hooks: OpenHooks,
): Promise<BoardStore> {
  if (store.kind === 'sqlite') {
    try {
      return openStore(join(dataDir, 'gatehouse.db'), { onRepair: hooks.onRepair });
    } catch (err) {
      if (err instanceof DatabaseError) throw new StoreConfigError(err.message, { cause: err });
      throw err;
    }
  }
  const { openPostgresStore, SchemaTooNewError } = await loadPostgresStore();
  const where = `${redactUrl(store.url)} (schema ${store.schema})`;
  for (let delayMs = 1000; ; delayMs = Math.min(delayMs * 2, MAX_RETRY_MS)) {
    try {
      return await openPostgresStore({
        ...store,
        onIdleError: hooks.onIdleError,
        ...(hooks.olderDaemons ? { olderDaemons: hooks.olderDaemons } : {}),
      });
    } catch (err) {
      if (err instanceof SchemaTooNewError)
        throw new StoreConfigError(`${where}: ${err.message}`, { cause: err });
      const code = (err as { code?: unknown }).code;
      const why = typeof code === 'string' ? OPERATORS_TO_FIX[code] : undefined;
      if (why) throw new StoreConfigError(`${where}: ${why} (${String(code)})`, { cause: err });
      if (err instanceof TypeError)
        throw new StoreConfigError(`${where}: not a usable URL (${err.message})`, { cause: err });
      hooks.onRetry(err, delayMs);
      await sleep(delayMs);
    }
  }
}

/**
 * The PostgreSQL store's code, loaded only for PostgreSQL: the embedded default starts without
 * it. Missing (a bundle built in part, the pg driver not installed) is for the operator to fix
 * by building or installing, not for a restart.
 */
async function loadPostgresStore() {
  try {
    const [{ openPostgresStore }, { SchemaTooNewError }] = await Promise.all([
      import('./postgres/open.js'),
      import('./postgres/schema.js'),
    ]);
    return { openPostgresStore, SchemaTooNewError };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new StoreConfigError(
      `the PostgreSQL store's code cannot be loaded (${typeof code === 'string' ? code : String(err)}): run npm ci, then npm run build`,
      { cause: err },
    );
  }
}
