// Slack's options (docs/platforms.md): the schema the config checks them against, apart
// from the adapter so that reading a config loads no adapter.
import { httpUrl, nonEmpty } from './option-parts.js';
import { closed, Type } from '../schema-types.js';

export const slackOptions = Type.Object(
  {
    botToken: nonEmpty(),
    appToken: Type.Optional(
      Type.String({ pattern: '^xapp-', expected: 'an app-level token ("xapp-…")' }),
    ),
    signingSecret: Type.Optional(nonEmpty()),
    apiBase: Type.Optional(httpUrl()),
  },
  closed,
);
