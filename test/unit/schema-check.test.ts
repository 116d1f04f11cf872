import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/defaults.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { matches } from '../../src/schema-check.js';
import { prng } from '../chaos/interleave.js';

// The quick check that accepts a config at start-up must say exactly what TypeBox says (TypeBox
// explains the refusals): the same verdict on thousands of seeded mutations of real configs.
const rich = {
  ...defaultConfig(),
  server: {
    host: '0.0.0.0',
    port: 0,
    bodyLimitBytes: 4096,
    requestTimeoutSeconds: 30,
    maxConnections: 64,
    allowedHosts: ['gatehouse.example'],
  },
  platforms: [
    {
      name: 'hooks',
      type: 'webhook',
      homeChannel: null,
      options: { url: 'http://127.0.0.1:9/x', secret: 'whsec_c3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nz' },
      breaker: { timeoutMs: 500 },
    },
  ],
};
rich.workers = {
  ...rich.workers,
  profiles: {
    agent: {
      command: ['/bin/true', 'x'],
      cwd: null,
      env: { A_B: 'c' },
      maxConcurrent: 2,
      maxRuntimeSeconds: 1.5,
      keepDescendants: false,
    },
  },
};

const VALUES: unknown[] = [
  '',
  'x',
  'a b',
  '-1',
  'webhook',
  -1,
  0,
  0.5,
  1,
  3,
  1e9,
  2 ** 31,
  Number.NaN,
  Infinity,
  true,
  false,
  null,
  undefined,
  [],
  ['a'],
  [''],
  [1],
  {},
  { x: 1 },
  { A: 'b' },
];

function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [at];
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return [at, ...keys.flatMap((k) => paths((value as Record<string, unknown>)[k], [...at, k]))];
}

function mutate(base: object, random: () => number): unknown {
  const copy = structuredClone(base) as Record<string | number, unknown>;
  const all = paths(copy).filter((p) => p.length > 0);
  const path = all[Math.floor(random() * all.length)]!;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  const roll = random();
  if (roll < 0.15 && !Array.isArray(parent)) delete parent[last];
  else if (roll < 0.25 && !Array.isArray(parent)) parent[`unknown${String(last)}`] = 1;
  else parent[last] = VALUES[Math.floor(random() * VALUES.length)];
  return copy;
}

describe('the start-up config check', () => {
  it('agrees with TypeBox on the defaults, a rich config and 20,000 mutations of them', () => {
    const random = prng(20261130);
    let refused = 0;
    for (const base of [defaultConfig(), rich]) {
      expect(matches(ConfigSchema, base)).toBe(true);
      expect(Value.Check(ConfigSchema, base)).toBe(true);
      for (let i = 0; i < 10_000; i++) {
        const candidate = mutate(base, random);
        const verdict = Value.Check(ConfigSchema, candidate);
        if (matches(ConfigSchema, candidate) !== verdict)
          expect.fail(`disagree (TypeBox: ${verdict}) on ${JSON.stringify(candidate)}`);
        if (!verdict) refused++;
      }
    }
    // Most mutations are refusals: the check is exercised on both answers.
    expect(refused).toBeGreaterThan(10_000);
  });

  it('refuses to guess about a keyword it does not know', () => {
    expect(() => matches({ type: 'string', format: 'email' }, 'a@b')).toThrow(/format/);
  });
});
