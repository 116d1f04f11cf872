// Each platform type's options (docs/platforms.md), checked key by key: what is required, what
// shape it has, and no key the adapter does not read.
import { MIN_KEY_BYTES, secretKey } from '../platforms/webhook-signature.js';
import { ConfigError } from './config-error.js';
import { DEFAULT_BREAKER } from './defaults.js';
import type { PlatformConfig, RawConfig } from './schema.js';

type Json = Record<string, unknown>;

function requireString(options: Json, key: string, at: string, optional = false): void {
  const value = options[key];
  if (value === undefined && optional) return;
  if (typeof value !== 'string' || value.length === 0) {
    throw new ConfigError(`${at}.options.${key}`, 'expected a non-empty string');
  }
}

const PLATFORM_OPTIONS: Record<PlatformConfig['type'], (options: Json, at: string) => void> = {
  webhook: (options, at) => {
    requireString(options, 'url', at);
    requireString(options, 'secret', at);
    if (secretKey(options.secret as string) === null) {
      throw new ConfigError(
        `${at}.options.secret`,
        `expected a Standard Webhooks secret: "whsec_" and the base64 of at least ${MIN_KEY_BYTES} random bytes (e.g. "whsec_$(openssl rand -base64 32)")`,
      );
    }
    if (!/^https?:\/\//.test(options.url as string)) {
      throw new ConfigError(`${at}.options.url`, 'expected an http(s) URL');
    }
    allowOnly(options, ['url', 'secret'], at);
  },
  telegram: (options, at) => {
    requireString(options, 'token', at);
    requireString(options, 'apiBase', at, true);
    checkPollSeconds(options, at);
    allowOnly(options, ['token', 'apiBase', 'pollTimeoutSeconds'], at);
  },
  matrix: (options, at) => {
    requireString(options, 'homeserver', at);
    requireString(options, 'accessToken', at);
    requireString(options, 'userId', at);
    if (!/^https?:\/\//.test(options.homeserver as string))
      throw new ConfigError(`${at}.options.homeserver`, 'expected an http(s) URL');
    if (!/^@[^:]+:.+$/.test(options.userId as string))
      throw new ConfigError(`${at}.options.userId`, 'expected a Matrix user id, "@name:server"');
    checkPollSeconds(options, at);
    allowOnly(options, ['homeserver', 'accessToken', 'userId', 'pollTimeoutSeconds'], at);
  },
  slack: (options, at) => {
    requireString(options, 'botToken', at);
    requireString(options, 'appToken', at, true);
    requireString(options, 'signingSecret', at, true);
    requireString(options, 'apiBase', at, true);
    if (options.appToken !== undefined && !(options.appToken as string).startsWith('xapp-'))
      throw new ConfigError(`${at}.options.appToken`, 'expected an app-level token ("xapp-…")');
    if (options.apiBase !== undefined && !/^https?:\/\//.test(options.apiBase as string))
      throw new ConfigError(`${at}.options.apiBase`, 'expected an http(s) URL');
    allowOnly(options, ['botToken', 'appToken', 'signingSecret', 'apiBase'], at);
  },
  discord: (options, at) => {
    requireString(options, 'botToken', at);
    requireString(options, 'apiBase', at, true);
    requireString(options, 'gatewayUrl', at, true);
    if (options.apiBase !== undefined && !/^https?:\/\//.test(options.apiBase as string))
      throw new ConfigError(`${at}.options.apiBase`, 'expected an http(s) URL');
    if (options.gatewayUrl !== undefined && !/^wss?:\/\//.test(options.gatewayUrl as string))
      throw new ConfigError(`${at}.options.gatewayUrl`, 'expected a ws(s) URL');
    allowOnly(options, ['botToken', 'apiBase', 'gatewayUrl'], at);
  },
};

function checkPollSeconds(options: Json, at: string): void {
  const poll = options.pollTimeoutSeconds;
  if (poll !== undefined && (typeof poll !== 'number' || poll < 0 || poll > 600)) {
    throw new ConfigError(`${at}.options.pollTimeoutSeconds`, 'expected a number from 0 to 600');
  }
}

function allowOnly(options: Json, keys: string[], at: string): void {
  for (const key of Object.keys(options)) {
    if (!keys.includes(key)) throw new ConfigError(`${at}.options.${key}`, 'unknown key');
  }
}

export function resolvePlatforms(raw: RawConfig['platforms']): PlatformConfig[] {
  const seen = new Set<string>();
  return raw.map((p, i) => {
    const at = `platforms.${i}`;
    if (seen.has(p.name))
      throw new ConfigError(`${at}.name`, `duplicate platform name "${p.name}"`);
    seen.add(p.name);
    PLATFORM_OPTIONS[p.type](p.options, at);
    return {
      name: p.name,
      type: p.type,
      enabled: p.enabled ?? true,
      homeChannel: p.homeChannel ?? null,
      options: p.options,
      breaker: { ...DEFAULT_BREAKER, ...p.breaker },
    };
  });
}
