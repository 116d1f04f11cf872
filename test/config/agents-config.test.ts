// A profile's agent (docs/agents.md): resolved with its defaults, and every mistake named by its key.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { tempDir, writeConfig } from '../helpers/daemon.js';

function load(profile: object) {
  const dir = tempDir();
  const config = { dataDir: dir, workers: { defaultProfile: 'a', profiles: { a: profile } } };
  return loadConfig({ config: writeConfig(dir, config) }, {}, dir);
}

function refusal(profile: object): { key: string; message: string } {
  try {
    load(profile);
  } catch (err) {
    if (err instanceof ConfigError) return { key: err.key, message: err.message };
    throw err;
  }
  throw new Error('no ConfigError');
}

describe('agent profiles in the config', () => {
  it('resolves an agent with its defaults: the kind on PATH, a 600 s idle timeout', () => {
    const p = load({ agent: { kind: 'claude' } }).workers.profiles.a!;
    expect(p.agent).toEqual({
      kind: 'claude',
      bin: 'claude',
      model: null,
      models: [],
      args: [],
      maxTurns: null,
      idleTimeoutSeconds: 600,
    });
    expect(p.command).toEqual(['claude']);
    const c = load({
      agent: { kind: 'codex', bin: '/opt/codex', model: 'm1', models: ['m1', 'm2'] },
    });
    expect(c.workers.profiles.a!.agent).toMatchObject({ bin: '/opt/codex', models: ['m1', 'm2'] });
  });

  it.each([
    [{}, 'workers.profiles.a', /exactly one of "command".*"agent"/],
    [{ command: ['/bin/true'], agent: { kind: 'claude' } }, 'workers.profiles.a', /exactly one/],
    [{ agent: { kind: 'gemini' } }, 'workers.profiles.a.agent.kind', /./],
    [
      { agent: { kind: 'claude', idleTimeoutSeconds: 0 } },
      'workers.profiles.a.agent.idleTimeoutSeconds',
      /./,
    ],
    [{ agent: { kind: 'claude', maxTurns: 0 } }, 'workers.profiles.a.agent.maxTurns', /./],
    [{ agent: { kind: 'claude', flags: [] } }, 'workers.profiles.a.agent.flags', /./],
    [
      { agent: { kind: 'claude' }, keepDescendants: true },
      'workers.profiles.a.keepDescendants',
      /ended whole/,
    ],
    [
      { agent: { kind: 'codex', model: 'a', models: ['b'] } },
      'workers.profiles.a.agent.models',
      /include the profile's model "a"/,
    ],
  ])('refuses %j, naming %s', (profile, key, message) => {
    const r = refusal(profile);
    expect(r.key).toBe(key);
    expect(r.message).toMatch(message);
  });
});
