// docs/errors.md is the users' list of error codes: every code the daemon can answer is in it,
// with the status it is answered with, and nothing else is.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/errors.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('docs/errors.md', () => {
  it('lists every error code with its status, and no other', () => {
    const text = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
    const documented = Object.fromEntries(
      [...text.matchAll(/^\| `([A-Z_]+)`\s*\| (\d{3})\s*\|/gm)].map((m) => [m[1], Number(m[2])]),
    );
    expect(documented).toEqual({ ...ERROR_STATUS });
  });
});
