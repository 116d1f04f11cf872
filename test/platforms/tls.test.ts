// The built daemon (its bundle, as `gatehouse run` loads it) reaching a chat platform over TLS:
// the doubles of the other tests speak plain HTTP and ws://, and the bundle loads https and tls
// only on first use (scripts/lazy-builtins.mjs).
import { describe, expect, it } from 'vitest';
import { startDaemon, tempDir, waitServing, writeConfig } from '../helpers/daemon.js';
import { slackDouble } from '../helpers/slack-double.js';
import { selfSignedCert } from '../helpers/tls-cert.js';
import { waitFor } from '../helpers/wait.js';

describe('the built daemon over TLS', () => {
  it("talks to Slack's Web API over HTTPS and to Socket Mode over wss, and a channel's /task makes a task", async () => {
    const cert = selfSignedCert(tempDir());
    const sl = await slackDouble(cert);
    expect(sl.url).toMatch(/^https:\/\//);
    const dataDir = tempDir();
    const config = writeConfig(dataDir, {
      workers: { maxConcurrent: 0 },
      platforms: [
        {
          name: 'sl',
          type: 'slack',
          options: { botToken: sl.botToken, appToken: sl.appToken, apiBase: sl.url },
        },
      ],
    });
    const daemon = startDaemon({
      dataDir,
      config,
      env: { NODE_EXTRA_CA_CERTS: cert.certPath },
    });
    const url = await waitServing(dataDir, daemon.pid);
    await waitFor('the Socket Mode connection', () => sl.connections === 1);
    const said = sl.say('C42', '/task over TLS');
    const reply = await waitFor('the reply', () =>
      sl.posted.find((m) => m.text.startsWith('Created t_')),
    );
    expect(reply.channel).toBe('C42');
    await waitFor('acknowledged', () => sl.acked.has(said));
    const tasks = (await (await fetch(`${url}/tasks`)).json()) as { tasks: { title: string }[] };
    expect(tasks.tasks.map((t) => t.title)).toEqual(['over TLS']);
  });
});
