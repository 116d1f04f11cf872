// The pieces each adapter's options schema is made of. `expected` says, in a config error, what
// the key takes (docs/platforms.md).
import { Type } from '../schema-types.js';

export const nonEmpty = () => Type.String({ minLength: 1, expected: 'a non-empty string' });
export const httpUrl = () => Type.String({ pattern: '^https?://', expected: 'an http(s) URL' });
export const pollTimeoutSeconds = () =>
  Type.Number({ minimum: 0, maximum: 600, expected: 'a number from 0 to 600' });
