import { describe, expect, it } from 'vitest';
import { classifyExit } from '../../src/kanban/model/exit-classifier.js';

const done = { status: 'done' as const, summary: 'ok', result: { n: 1 } };
const blocked = { status: 'blocked' as const, reason: 'needs a key' };

// docs/workers.md "Exit classification", one row each: [how it ended, what it said, outcome, fields].
const TABLE: [
  string,
  Parameters<typeof classifyExit>[0],
  Parameters<typeof classifyExit>[1],
  string,
  object,
][] = [
  [
    'exit 0 with a done verdict',
    { exitCode: 0, signal: null },
    done,
    'completed',
    { summary: 'ok', result: { n: 1 } },
  ],
  [
    'exit 0 with a blocked verdict',
    { exitCode: 0, signal: null },
    blocked,
    'blocked',
    { blockReason: 'needs a key' },
  ],
  [
    'exit 0 without a verdict',
    { exitCode: 0, signal: null },
    null,
    'protocol_violation',
    { error: 'exited 0 without reporting a result' },
  ],
  [
    'exit 0 with a garbage result.json',
    { exitCode: 0, signal: null },
    'result.json is not valid JSON',
    'protocol_violation',
    { error: 'result.json is not valid JSON' },
  ],
  ['exit 75', { exitCode: 75, signal: null }, null, 'rate_limited', { exitCode: 75 }],
  ['exit 78', { exitCode: 78, signal: null }, null, 'crashed', { exitCode: 78 }],
  ['exit 3, verdict ignored', { exitCode: 3, signal: null }, done, 'crashed', { exitCode: 3 }],
  [
    'killed by a signal',
    { exitCode: null, signal: 'SIGKILL' },
    null,
    'crashed',
    { signal: 'SIGKILL' },
  ],
  [
    'not started by its wrapper, its host lease run out (verdict ignored)',
    { exitCode: 125, signal: null, notStarted: true },
    done,
    'interrupted',
    { exitCode: null, error: 'its host lost its lease before the worker was started' },
  ],
  [
    'unknown end (adopted, no exit record)',
    null,
    null,
    'crashed',
    { error: 'pid 42 not alive (no exit record)' },
  ],
];

describe('classifyExit', () => {
  for (const [name, exit, verdict, outcome, fields] of TABLE) {
    it(`${name} → ${outcome}`, () => {
      expect(classifyExit(exit, verdict, '', 42)).toMatchObject({ outcome, ...fields });
    });
  }

  it('puts the log tail under the reason of a crash', () => {
    const c = classifyExit({ exitCode: null, signal: 'SIGKILL' }, null, 'last words\n', 42);
    expect(c.error).toBe('killed by SIGKILL\nlast words');
  });
});
