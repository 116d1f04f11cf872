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
  'api-streaming',
  'dispatcher',
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
  'What `npm run bench` measures, as of its latest run. Each figure is measured beside its',
  'baseline in the same run (load generator and server share the machine). History is in git.',
  '',
  "**The rule:** a speed change shows its gain at users' scale (agents per host × minutes per",
  'run, a restart, an API under load), or it does not land. Machinery without such a gain is a',
  'cost to every later reader. Figures of trivial workers (a `/bin/true` a run) carry no goal:',
  "they show the daemon's own cost per run, which a user running agents for minutes never sees.",
  '',
  `Latest run: ${new Date().toISOString().slice(0, 10)}, on ${machine}.`,
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
writeFileSync(join(ROOT, 'docs/benchmarks.md'), table);
