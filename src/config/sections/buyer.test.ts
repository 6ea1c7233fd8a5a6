/** The buyer's audit settings as the config file gives them (docs/guide/configuration.md). */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../ConfigError.js';
import { validateConfig } from '../loadConfig.js';

describe('buyer.audit.realAnswers', () => {
  it('is off unless the buyer opts in', () => {
    expect(validateConfig({}, 'test').buyer.audit.realAnswers).toBe(false);
    const on = validateConfig({ buyer: { audit: { realAnswers: true } } }, 'test');
    expect(on.buyer.audit).toMatchObject({ enabled: true, realAnswers: true });
  });

  it('refuses a value that is not true or false, naming the setting', () => {
    for (const value of ['yes', 1, null]) {
      const load = () =>
        validateConfig({ buyer: { audit: { realAnswers: value } } }, 'config.json');
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(/^config\.json: buyer\.audit\.realAnswers: /);
    }
  });
});
