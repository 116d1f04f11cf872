// A configuration mistake, naming the key that is wrong.

/** A configuration mistake; `key` names what is wrong (a dotted path, a variable or the file). */
export class ConfigError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`${key}: ${message}`);
    this.name = 'ConfigError';
  }
}
