// `gatehouse run`: the daemon loaded from its bundle (daemon-loader.ts). It imports only what it
// needs before the bundle, which has its own copy of everything else: each module loaded here
// first is start-up time spent twice.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { locateDataDir } from '../config/locate.js';
import { parseFlags, parseInteger } from './args.js';

export const configFlags = {
  config: { type: 'string' },
  'data-dir': { type: 'string' },
} as const;

export async function runCommand(args: string[]): Promise<void> {
  const { values } = parseFlags(args, {
    ...configFlags,
    host: { type: 'string' },
    port: { type: 'string' },
    replace: { type: 'boolean' },
  });
  const overrides = {
    config: values.config,
    dataDir: values['data-dir'],
    host: values.host,
    port: values.port === undefined ? undefined : parseInteger('--port', values.port, 0, 65535),
  };
  // Loaded here so that status and stop start without the daemon's modules.
  const loader = await import('./daemon-loader.js');
  const dataDir = locateDataDir(overrides);
  const trial =
    dataDir !== null && existsSync(dataDir) ? join(dataDir, loader.CACHE_TRIAL_FILE) : null;
  const daemon = loader.loadDaemon(loader.DAEMON_BUNDLE, loader.DAEMON_CODE_CACHE, trial);
  if (daemon.cacheSkipped !== null && trial !== null)
    process.stderr.write(`gatehouse: the code cache was not used: ${daemon.cacheSkipped}\n`);
  // Any ending of its own (a stop during the crash-loop backoff, a configuration error, an
  // exception) shows the code ran: only a native crash or a kill leaves the mark.
  process.on('exit', () => daemon.trialPassed());
  await daemon.runDaemon({ overrides, replace: values.replace ?? false });
  daemon.trialPassed();
}
