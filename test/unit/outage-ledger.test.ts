import { describe, expect, it } from 'vitest';
import { OutageLedger } from '../../src/platforms/outage-ledger.js';

describe("a platform's outage ledger", () => {
  it('tells an outage of many failed probes as one opening and one closing with the count', () => {
    const ledger = new OutageLedger(null);
    expect(ledger.end(5, false)).toBeNull();
    expect(ledger.opened(1_000, false)).toBe('began');
    expect(ledger.firstProbe()).toBe(true);
    expect(ledger.opened(2_000, false)).toBe('reopened');
    expect(ledger.opened(3_000, false)).toBe('reopened');
    expect(ledger.firstProbe()).toBe(false);
    expect(ledger.current).toEqual({ since: 1_000, reopened: 2 });
    expect(ledger.end(61_000, false)).toEqual({ reopened: 2, openForMs: 60_000, by: 'recovered' });
    expect(ledger.current).toBeNull();
    expect(ledger.end(62_000, false)).toBeNull();
  });

  it('carries an outage over a restart, and ends it by the operator’s word', () => {
    const ledger = new OutageLedger({ since: 500, reopened: 3 });
    expect(ledger.opened(9_000, true)).toBe('restored');
    expect(ledger.current).toEqual({ since: 500, reopened: 3 });
    expect(ledger.opened(10_000, false)).toBe('reopened');
    expect(ledger.end(10_500, true)).toEqual({ reopened: 4, openForMs: 10_000, by: 'operator' });
  });
});
