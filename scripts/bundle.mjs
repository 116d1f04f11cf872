#!/usr/bin/env node
// Builds the daemon's bundle (dist/bundle/daemon.cjs, and the PostgreSQL store apart in
// daemon-postgres.cjs, with the pg driver it alone needs; the MCP SDK in chunks of its own, loaded
// at the first call of /mcp; rolldown's runtime, which they share) from the compiled modules:
// what `gatehouse run` loads (see src/cli/daemon-loader.ts). Then the dashboard: its script
// (dashboard/main.ts) bundled and inlined into its page, dist/public/index.html, which the
// daemon serves with that script's hash as its Content-Security-Policy.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build, rolldown } from 'rolldown';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, 'dist/bundle/daemon.cjs');

rmSync(join(ROOT, 'dist/bundle'), { recursive: true, force: true });
await build({
  input: join(ROOT, 'dist/gateway/daemon.js'),
  platform: 'node',
  // Native code, packages that serve their own files, and what is loaded only to explain an
  // error or only for PostgreSQL stay where npm put them.
  external: [
    /^node:/,
    'better-sqlite3',
    'pg',
    /^@sinclair\/typebox/,
    'pidusage',
    /^@fastify\/swagger/,
  ],
  // Strict, as the ES modules it is made of are (a write to the frozen config must throw).
  // The entry's exports stay as they are, for the PostgreSQL chunk's use (see the loader).
  preserveEntrySignatures: 'allow-extension',
  output: {
    dir: dirname(OUT),
    entryFileNames: 'daemon.cjs',
    chunkFileNames: '[name].cjs',
    // The PostgreSQL store's folder only: what it shares with the SQLite path stays here.
    codeSplitting: {
      includeDependenciesRecursively: false,
      groups: [{ name: 'daemon-postgres', test: /[\\/]kanban[\\/]store[\\/]postgres[\\/]/ }],
    },
    format: 'cjs',
    strict: true,
    // ASCII only: V8 then keeps the source as one byte a character, and Node decodes it without
    // a UTF-8 pass (non-ASCII text in 95 lines made it two: 5 ms more each start). Comments go
    // for the same reason, and are not read by anyone in a build artifact.
    charset: 'ascii',
    comments: false,
  },
  logLevel: 'warn',
});

const dashboard = await rolldown({
  input: join(ROOT, 'dashboard/main.ts'),
  platform: 'browser',
  logLevel: 'warn',
});
const [script] = (await dashboard.generate({ format: 'iife', comments: false })).output;
await dashboard.close();
if (/<\/script/i.test(script.code)) throw new Error('the dashboard script must not say </script');
const page = readFileSync(join(ROOT, 'public/index.html'), 'utf8');
const parts = page.split('<script></script>');
if (parts.length !== 2) throw new Error('public/index.html must hold one <script></script>');
mkdirSync(join(ROOT, 'dist/public'), { recursive: true });
writeFileSync(
  join(ROOT, 'dist/public/index.html'),
  `${parts[0]}<script>\n${script.code}</script>${parts[1]}`,
);
