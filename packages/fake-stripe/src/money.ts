/** Currencies whose amounts Stripe counts in whole units (no cents). */
const ZERO_DECIMAL = new Set([
  'bif',
  'clp',
  'djf',
  'gnf',
  'jpy',
  'kmf',
  'krw',
  'mga',
  'pyg',
  'rwf',
  'ugx',
  'vnd',
  'vuv',
  'xaf',
  'xof',
  'xpf',
]);
const SYMBOLS: Record<string, string> = { usd: '$', eur: '€', gbp: '£', jpy: '¥' };

/** An amount in a currency's minor unit, as people read it: `$10.00`, `¥1000`, `10.00 CHF`. */
export function formatAmount(amount: number, currency: string): string {
  const code = currency.toLowerCase();
  const major = ZERO_DECIMAL.has(code) ? String(amount) : (amount / 100).toFixed(2);
  const symbol = SYMBOLS[code];
  return symbol ? `${symbol}${major}` : `${major} ${code.toUpperCase()}`;
}
