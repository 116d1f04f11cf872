// Rules of the house a linter does not know: nothing users get cites a document they do not
// have (the product's contract for users is docs/).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('the house', () => {
  it('cites no SPEC in anything users get: the code, the dashboard, docs, the README', () => {
    const shipped = [
      ...['src', 'public', 'dashboard', 'docs', 'libexec', 'contrib', 'examples'].flatMap((d) =>
        filesUnder(join(ROOT, d)),
      ),
      join(ROOT, 'README.md'),
    ].filter((f) => /\.(ts|js|mjs|html|css|md|sh|conf|service|json)$/.test(f));
    const citing = shipped.filter((f) => /\bSPEC\b/.test(readFileSync(f, 'utf8')));
    expect(citing.map((f) => f.slice(ROOT.length + 1))).toEqual([]);
  });
});
