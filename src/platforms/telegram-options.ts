// Telegram's options (docs/platforms.md): the schema the config checks them against, apart
// from the adapter so that reading a config loads no adapter.
import { httpUrl, nonEmpty, pollTimeoutSeconds } from './option-parts.js';
import { closed, Type } from '../schema-types.js';

export const telegramOptions = Type.Object(
  {
    token: nonEmpty(),
    apiBase: Type.Optional(httpUrl()),
    pollTimeoutSeconds: Type.Optional(pollTimeoutSeconds()),
  },
  closed,
);
