#!/usr/bin/env node
// Fails when the relative imports under a folder form a cycle (arrows must point down).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? 'src');

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const graph = new Map();
for (const file of files(root)) {
  const text = readFileSync(file, 'utf8');
  const deps = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)]
    .filter((m) => !/^import\s+type\s/.test(m[0]) && !/^export\s+type\s/.test(m[0]))
    .map((m) => resolve(dirname(file), m[1].replace(/\.js$/, '.ts')));
  graph.set(file, deps);
}

const state = new Map();
const cycles = [];
function visit(node, path) {
  state.set(node, 'open');
  for (const dep of graph.get(node) ?? []) {
    if (state.get(dep) === 'open') cycles.push([...path.slice(path.indexOf(dep)), dep]);
    else if (!state.has(dep)) visit(dep, [...path, dep]);
  }
  state.set(node, 'done');
}
for (const node of graph.keys()) if (!state.has(node)) visit(node, [node]);

if (cycles.length > 0) {
  for (const cycle of cycles)
    console.error(`import cycle: ${cycle.map((f) => relative(root, f)).join(' -> ')}`);
  process.exit(1);
}
console.log(`no import cycles in ${graph.size} files`);
