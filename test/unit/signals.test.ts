// A run's exit status as its wrapper records it (above 128: killed by the signal status - 128),
// named from the machine's one signal table (src/proc/signals.ts), as child_process names them.
import { describe, expect, it } from 'vitest';
import { decodeStatus } from '../../src/kanban/dispatch/run-files.js';

describe('exit statuses', () => {
  it('names the signal that ended a run, its first name, and keeps an exit code as it is', () => {
    expect(decodeStatus(137)).toEqual({ exitCode: null, signal: 'SIGKILL' });
    expect(decodeStatus(143)).toEqual({ exitCode: null, signal: 'SIGTERM' });
    // SIGABRT, not its alias SIGIOT.
    expect(decodeStatus(134)).toEqual({ exitCode: null, signal: 'SIGABRT' });
    expect(decodeStatus(128 + 31)).toEqual({ exitCode: null, signal: 'SIGSYS' });
    expect(decodeStatus(0)).toEqual({ exitCode: 0, signal: null });
    expect(decodeStatus(128)).toEqual({ exitCode: 128, signal: null });
    expect(decodeStatus(255)).toEqual({ exitCode: 255, signal: null });
  });
});
