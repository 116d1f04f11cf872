// Discord's options (docs/platforms.md): the schema the config checks them against, apart
// from the adapter so that reading a config loads no adapter.
import { httpUrl, nonEmpty } from './option-parts.js';
import { closed, Type } from '../schema-types.js';

export const discordOptions = Type.Object(
  {
    botToken: nonEmpty(),
    apiBase: Type.Optional(httpUrl()),
    gatewayUrl: Type.Optional(Type.String({ pattern: '^wss?://', expected: 'a ws(s) URL' })),
  },
  closed,
);
