// The `schedules` section (docs/schedules.md): resolved with its defaults, and every mistake a
// config error naming the schedule's key, before anything starts.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { tempDir, writeConfig } from '../helpers/daemon.js';

function load(schedules: object) {
  const dir = tempDir();
  return loadConfig({ config: writeConfig(dir, { dataDir: dir, schedules }) }, {}, dir);
}

function refusal(schedules: object): string {
  try {
    load(schedules);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('no ConfigError');
}

const task = { title: 'bump dependencies' };

describe('schedules in the config', () => {
  it('resolves a schedule with its defaults: UTC, overlap skip, enabled', () => {
    expect(load({ nightly: { cron: '0 3 * * *', task } }).schedules).toEqual({
      nightly: {
        name: 'nightly',
        cron: '0 3 * * *',
        timezone: 'UTC',
        task: { title: 'bump dependencies', body: '', assignee: null, repo: null, priority: 0 },
        overlap: 'skip',
        enabled: true,
      },
    });
  });

  it.each([
    [{ nightly: { cron: '0 25 * * *', task } }, 'schedules.nightly.cron', 'hour'],
    [{ nightly: { cron: '0 0 3 * * *', task } }, 'schedules.nightly.cron', '5 parts'],
    [{ nightly: { cron: 'every night', task } }, 'schedules.nightly.cron', 'five-field'],
    [{ nightly: { cron: '0 0 30 2 *', task } }, 'schedules.nightly.cron', 'never fires'],
    [
      { nightly: { cron: '0 3 * * *', timezone: 'Mars/Olympus', task } },
      'schedules.nightly.timezone',
      'IANA',
    ],
    [
      { nightly: { cron: '0 3 * * *', task: { ...task, assignee: 'nobody' } } },
      'schedules.nightly.task.assignee',
      'no profile named "nobody"',
    ],
    [
      { nightly: { cron: '0 3 * * *', task: { ...task, repo: 'app' } } },
      'schedules.nightly.task.repo',
      '"app" is not a repository in workspaces.repos',
    ],
    [
      { nightly: { cron: '0 3 * * *', task: { title: '   ' } } },
      'schedules.nightly.task.title',
      '',
    ],
    [
      { nightly: { cron: '0 3 * * *', task: { title: 'x'.repeat(501) } } },
      'schedules.nightly.task.title',
      '',
    ],
    [{ nightly: { cron: '0 3 * * *', task: {} } }, 'schedules.nightly.task.title', ''],
    [{ 'bad/name': { cron: '0 3 * * *', task } }, 'schedules', ''],
    [{ nightly: { cron: '0 3 * * *', task, overlap: 'never' } }, 'schedules.nightly.overlap', ''],
  ])('refuses %j at %s', (schedules, key, words) => {
    const message = refusal(schedules);
    expect(message).toContain(key);
    expect(message).toContain(words);
  });
});
