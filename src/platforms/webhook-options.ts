// Webhook's options (docs/platforms.md): the schema the config checks them against, apart
// from the adapter so that reading a config loads no adapter.
import { httpUrl } from './option-parts.js';
import { closed, Type } from '../schema-types.js';
import { SECRET_FORM } from './webhook-signature.js';

/** Its options; the secret's key is checked apart (secretKey), as a pattern cannot say it. */
export const webhookOptions = Type.Object(
  {
    url: httpUrl(),
    secret: Type.String({ minLength: 1, expected: SECRET_FORM }),
  },
  closed,
);
