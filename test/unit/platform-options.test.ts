import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { resolvePlatforms } from '../../src/config/platform-options.js';
import type { RawConfig } from '../../src/config/schema.js';
import { discordOptions } from '../../src/platforms/discord-options.js';
import { matrixOptions } from '../../src/platforms/matrix-options.js';
import { slackOptions } from '../../src/platforms/slack-options.js';
import { telegramOptions } from '../../src/platforms/telegram-options.js';
import { webhookOptions } from '../../src/platforms/webhook-options.js';
import { matches } from '../../src/schema-check.js';

type Raw = RawConfig['platforms'][number];
const SECRET = 'whsec_c3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nzc3Nz';

/** The key and words a platform's options are refused with. */
function refusal(type: Raw['type'], options: Record<string, unknown>): string {
  try {
    resolvePlatforms([{ name: 'p', type, options }]);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return 'accepted';
}

describe("a platform's options, checked against its adapter's schema", () => {
  it('accepts what each adapter reads', () => {
    const good: [Raw['type'], Record<string, unknown>][] = [
      ['webhook', { url: 'https://hooks.example/in', secret: SECRET }],
      ['telegram', { token: 't', apiBase: 'http://127.0.0.1:1', pollTimeoutSeconds: 0 }],
      ['matrix', { homeserver: 'https://m.example', accessToken: 't', userId: '@b:m.example' }],
      ['slack', { botToken: 'xoxb-1', appToken: 'xapp-1', signingSecret: 's' }],
      ['discord', { botToken: 't', gatewayUrl: 'wss://gw.example' }],
    ];
    for (const [type, options] of good)
      expect({ type, said: refusal(type, options) }).toEqual({ type, said: 'accepted' });
  });

  it('names the key and what it takes, in words', () => {
    expect(refusal('webhook', { url: 'ftp://x', secret: SECRET })).toMatch(
      /platforms\.0\.options\.url.*expected an http\(s\) URL/,
    );
    expect(refusal('webhook', { url: 'http://x/', secret: 'whsec_c2hvcnQ=' })).toMatch(
      /platforms\.0\.options\.secret.*expected a Standard Webhooks secret/,
    );
    expect(refusal('telegram', {})).toMatch(/options\.token.*expected a non-empty string/);
    expect(refusal('telegram', { token: 'x', pollTimeoutSeconds: 601 })).toMatch(
      /options\.pollTimeoutSeconds.*expected a number from 0 to 600/,
    );
    expect(
      refusal('matrix', { homeserver: 'https://m.example', accessToken: 't', userId: 'bot' }),
    ).toMatch(/options\.userId.*"@name:server"/);
    expect(refusal('slack', { botToken: 'x', appToken: 'xoxb-2' })).toMatch(
      /options\.appToken.*app-level token/,
    );
    expect(refusal('discord', { botToken: 't', gatewayUrl: 'http://x' })).toMatch(
      /options\.gatewayUrl.*expected a ws\(s\) URL/,
    );
    expect(refusal('discord', { botToken: 't', shard: 1 })).toMatch(/options\.shard.*unknown key/);
  });

  it('says what TypeBox says of each schema', () => {
    const samples: unknown[] = [
      {},
      { url: 5 },
      { token: '' },
      { botToken: 'x', apiBase: 'ws://' },
      null,
      [],
    ];
    for (const schema of [
      webhookOptions,
      telegramOptions,
      matrixOptions,
      slackOptions,
      discordOptions,
    ])
      for (const sample of samples)
        expect(matches(schema, sample)).toBe(Value.Check(schema, sample));
  });
});
