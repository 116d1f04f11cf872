// The document a daemon serves passes the linters client generators' users run: Redocly's
// recommended rules and Spectral's OpenAPI rules, with the repo's configs (none turned off).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';
import { ROOT, tempDir } from '../helpers/daemon.js';

/** Runs a linter from node_modules/.bin, offline: no telemetry, no update check. */
function lint(bin: string, args: string[]) {
  const res = spawnSync(join(ROOT, 'node_modules/.bin', bin), args, {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      SCARF_ANALYTICS: 'false',
      DO_NOT_TRACK: '1',
    },
  });
  return { status: res.status, stdout: res.stdout, out: `${res.stdout}${res.stderr}` };
}

it('passes Redocly’s recommended rules and Spectral’s OpenAPI rules without a warning', async () => {
  const gw = await startGateway();
  const file = join(tempDir('gatehouse-openapi-'), 'openapi.json');
  writeFileSync(file, JSON.stringify((await api(gw.url, 'GET', '/openapi.json')).body));

  const redocly = lint('redocly', ['lint', '--config', 'redocly.yaml', '--format', 'json', file]);
  expect(redocly.status, redocly.out).toBe(0);
  const report = JSON.parse(redocly.stdout) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string; message: string }[];
  };
  expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });

  const spectral = lint('spectral', [
    'lint',
    '--ruleset',
    '.spectral.yaml',
    '--fail-severity',
    'hint',
    '--format',
    'json',
    '--output',
    `${file}.spectral.json`,
    file,
  ]);
  expect(spectral.status, spectral.out).toBe(0);
  const findings = JSON.parse(readFileSync(`${file}.spectral.json`, 'utf8')) as {
    code: string;
    message: string;
  }[];
  expect(findings.map((f) => `${f.code}: ${f.message}`)).toEqual([]);
}, 120_000);
