import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ceilDiv, formatUsd, MoneyFormatError, parseUsd, usdNumberToMicro } from './microUsd.js';

describe('parseUsd / formatUsd', () => {
  it('round-trips every amount exactly', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n }), (micro) => {
        expect(parseUsd(formatUsd(micro), { allowNegative: true })).toBe(micro);
      }),
    );
  });

  it('formats with exactly six fractional digits', () => {
    expect(formatUsd(0n)).toBe('0.000000');
    expect(formatUsd(2_104_512n)).toBe('2.104512');
    expect(formatUsd(-1n)).toBe('-0.000001');
    expect(formatUsd(500_000_000n)).toBe('500.000000');
  });

  it('parses the shapes users type', () => {
    expect(parseUsd('2')).toBe(2_000_000n);
    expect(parseUsd('2.5')).toBe(2_500_000n);
    expect(parseUsd(' 0.000001 ')).toBe(1n);
    expect(parseUsd('2.104512')).toBe(2_104_512n);
  });

  it.each(['', 'abc', '1.', '.5', '1e3', '1,5', '0x10', '2.1234567', '-1', 'NaN', 'Infinity'])(
    'rejects %j with a clear error',
    (text) => {
      expect(() => parseUsd(text)).toThrow(MoneyFormatError);
    },
  );

  it('never produces a float: formatted output is always a plain decimal string', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), (micro) => {
        expect(formatUsd(micro)).toMatch(/^\d+\.\d{6}$/);
      }),
    );
  });
});

describe('usdNumberToMicro', () => {
  it('converts JSON numbers exactly, including exponent notation', () => {
    expect(usdNumberToMicro(0.15)).toBe(150_000n);
    expect(usdNumberToMicro(3)).toBe(3_000_000n);
    expect(usdNumberToMicro(0.3)).toBe(300_000n);
    expect(usdNumberToMicro(1e-6)).toBe(1n);
    expect(usdNumberToMicro(1e21)).toBe(10n ** 27n);
  });

  it('rejects non-finite and over-precise numbers', () => {
    expect(() => usdNumberToMicro(Number.NaN)).toThrow(MoneyFormatError);
    expect(() => usdNumberToMicro(Number.POSITIVE_INFINITY)).toThrow(MoneyFormatError);
    expect(() => usdNumberToMicro(1e-7)).toThrow(/decimal places/);
    expect(() => usdNumberToMicro(-1)).toThrow(/negative/);
  });

  it('agrees with parseUsd for every number with at most six decimals', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), (micro) => {
        const asNumber = Number(formatUsd(BigInt(micro)));
        expect(usdNumberToMicro(asNumber)).toBe(BigInt(micro));
      }),
    );
  });
});

describe('ceilDiv', () => {
  it('rounds up for positive numerators and is exact on multiples', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 15n }),
        fc.bigInt({ min: 1n, max: 10n ** 9n }),
        (n, d) => {
          const q = ceilDiv(n, d);
          expect(q * d >= n).toBe(true);
          expect((q - 1n) * d < n || n === 0n).toBe(true);
        },
      ),
    );
  });
});
