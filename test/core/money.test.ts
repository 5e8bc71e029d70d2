import { describe, expect, it } from 'vitest';
import { dec, decimalNumber, moneyAmount, round, sum, toWire, unitCost } from '../../src/core/money.js';

describe('money', () => {
  it('adds decimals exactly where binary floats would not', () => {
    expect(toWire(dec(0.1).plus(dec(0.2)))).toBe(0.3);
    expect(toWire(sum(Array.from({ length: 10_000 }, () => dec(0.1))))).toBe(1000);
    expect(toWire(dec(2.5).times(dec(84.4)))).toBe(211);
  });

  it('rounds half-up at the edge', () => {
    expect(toWire(dec('1.005'))).toBe(1.01);
    expect(toWire(dec('-1.005'))).toBe(-1.01);
    expect(round(dec('2.34565'), 4).toFixed()).toBe('2.3457');
    expect(toWire(dec('85').dividedBy(15), 4)).toBe(5.6667);
  });

  it('reads numeric text and other decimals', () => {
    expect(
      dec('12345678901234567890.1234')
        .plus(dec({ toString: () => '0.0001' }))
        .toFixed(),
    ).toBe('12345678901234567890.1235');
  });

  it('accepts numbers with at most the allowed decimals', () => {
    expect(moneyAmount().safeParse(12.34).success).toBe(true);
    expect(moneyAmount().safeParse(12.345).success).toBe(false);
    expect(moneyAmount().safeParse(-1).success).toBe(false);
    expect(moneyAmount({ min: -100 }).safeParse(-1).success).toBe(true);
    expect(unitCost().safeParse(1.2345).success).toBe(true);
    expect(unitCost().safeParse(1.23456).success).toBe(false);
    expect(decimalNumber(3).safeParse(1e-7).success).toBe(false);
    expect(decimalNumber(3).safeParse(Number.NaN).success).toBe(false);
  });
});
