/** Numbers and counted nouns, written one way across the console (en-US: "1,000", "1 credit"). */
const NUMBER = new Intl.NumberFormat('en-US');
const PLURAL = new Intl.PluralRules('en-US');

/** A number with thousands separators ("12,500"); an em dash when there is none. */
export function formatNumber(value: number | null | undefined): string {
  return value == null ? '—' : NUMBER.format(value);
}

/** A count and its noun, singular or plural as the count asks: plural(1, 'credit', 'credits') is "1 credit". */
export function plural(count: number, one: string, other: string): string {
  return `${formatNumber(count)} ${PLURAL.select(count) === 'one' ? one : other}`;
}
