/** A configuration problem: one line naming the file, the field and the reason. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
