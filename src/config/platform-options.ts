// Each platform type's options (docs/platforms.md), checked against the schema its adapter
// exports: what is required, what shape it has, and no key the adapter does not read.
import { discordOptions } from '../platforms/discord-options.js';
import { matrixOptions } from '../platforms/matrix-options.js';
import { slackOptions } from '../platforms/slack-options.js';
import { telegramOptions } from '../platforms/telegram-options.js';
import { webhookOptions } from '../platforms/webhook-options.js';
import { SECRET_FORM, secretKey } from '../platforms/webhook-signature.js';
import type { TSchema } from '../schema-types.js';
import { ConfigError } from './config-error.js';
import { DEFAULT_BREAKER } from './defaults.js';
import { check } from './messages.js';
import type { PlatformConfig, RawConfig } from './schema.js';

const PLATFORM_OPTIONS: Record<PlatformConfig['type'], TSchema> = {
  webhook: webhookOptions,
  telegram: telegramOptions,
  matrix: matrixOptions,
  slack: slackOptions,
  discord: discordOptions,
};

export function resolvePlatforms(raw: RawConfig['platforms']): PlatformConfig[] {
  const seen = new Set<string>();
  return raw.map((p, i) => {
    const at = `platforms.${i}`;
    if (seen.has(p.name))
      throw new ConfigError(`${at}.name`, `duplicate platform name "${p.name}"`);
    seen.add(p.name);
    check(PLATFORM_OPTIONS[p.type], p.options, `${at}.options`);
    // A webhook's secret is a key of enough bytes, which no pattern can say.
    if (p.type === 'webhook' && secretKey(p.options.secret as string) === null)
      throw new ConfigError(`${at}.options.secret`, `expected ${SECRET_FORM}`);
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
