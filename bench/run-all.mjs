// `npm run bench`: runs every benchmark, prints one table (figure, value, baseline from the same
// run, ratio, goal) and writes it to docs/benchmarks.md with the machine it ran on.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';

const SUITES = [
  'startup',
  'api',
  'dispatcher',
  'starter',
  'postgres',
  'hosts',
  'hosts-claims',
  'platforms',
  'footprint',
  'retention',
  'dashboard',
  'agents',
  'sandbox',
  'mcp',
  'spend',
];

const fmt = (n) => (Number.isFinite(n) ? (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2)) : '-');

const sections = [];
for (const name of SUITES) {
  const mod = await import(`./${name}.mjs`);
  sections.push({ name, rows: await mod.run() });
}
// The benchmarks that use the tests' TypeScript doubles run under vitest (bench/*.bench.ts).
for (const name of ['pulls']) {
  const rowsFile = join(tmpdir(), `gatehouse-bench-${name}-${process.pid}.json`);
  execFileSync(
    'npx',
    ['vitest', 'run', '--config', 'vitest.bench.config.ts', `bench/${name}.bench.ts`],
    {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, GH_BENCH_ROWS: rowsFile },
    },
  );
  sections.push({ name, rows: JSON.parse(readFileSync(rowsFile, 'utf8')) });
  rmSync(rowsFile, { force: true });
}

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Linux ${release()}, Node ${process.version}`;
const lines = [
  '# Benchmarks',
  '',
  `Latest \`npm run bench\`, ${new Date().toISOString().slice(0, 10)}, on ${machine}. Each figure`,
  'is measured side by side with its baseline in the same run; load generator and server share',
  "the machine's cores.",
  '',
  '| suite | figure | value | baseline (same run) | ratio | goal |',
  '|---|---|---|---|---|---|',
];
for (const { name, rows } of sections) {
  for (const r of rows) {
    const ratio = r.baseline ? `${(r.value / r.baseline).toFixed(2)}x` : '-';
    const baseline = r.baselineName ? `${r.baselineName}: ${fmt(r.baseline)} ${r.unit}` : '-';
    lines.push(
      `| ${name} | ${r.figure} | ${fmt(r.value)} ${r.unit} | ${baseline} | ${ratio} | ${r.goal ?? '-'} |`,
    );
  }
}
const table = `${lines.join('\n')}\n`;
console.log(`\n${table}`);
// The table replaces the file's head; the sections after it (profiles, one issue's figures
// before and after) are kept as they are.
const file = join(ROOT, 'docs/benchmarks.md');
const old = readFileSync(file, 'utf8');
const sectionsStart = old.search(/^## /m);
writeFileSync(file, sectionsStart < 0 ? table : `${table}\n${old.slice(sectionsStart)}`);
