#!/usr/bin/env node
// Docker HEALTHCHECK: asks /health on the port the running instance wrote to its pid file, so
// it follows whatever port the configuration chose. Exit 0 healthy, 1 not.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dataDir = process.env.GATEHOUSE_DATA_DIR ?? '.gatehouse';
try {
  const { port } = JSON.parse(readFileSync(join(dataDir, 'gatehouse.pid'), 'utf8'));
  const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(4000) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
