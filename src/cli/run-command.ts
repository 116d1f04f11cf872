// `gatehouse run`: the daemon loaded from its bundle (daemon-loader.ts). It imports only what it
// needs before the bundle, which has its own copy of everything else: each module loaded here
// first is start-up time spent twice.
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
  const { loadDaemon } = await import('./daemon-loader.js');
  await loadDaemon()({ overrides, replace: values.replace ?? false });
}
