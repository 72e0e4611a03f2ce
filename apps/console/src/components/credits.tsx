import { useQuery } from '@tanstack/react-query';
import { WorkspaceLink } from './workspace-link';
import { api, currentWorkspaceId, type Role, type Schemas, unwrap } from '../api/client';
import { formatNumber } from '../format';
import { atLeast } from '../roles';

export type Billing = Schemas['Billing'];
export type AccountCredits = Schemas['AccountResponse']['credits'];

/** How often the credits are read again while a page shows them (and, after a payment, how often until it lands). */
const CREDITS_REFRESH_MS = 10_000;

/** The workspace's billing (packs, auto-recharge, limits, the month's spend); every role may read it. */
export function useBilling(refetchInterval: number | false = false) {
  return useQuery({ queryKey: [currentWorkspaceId(), 'billing'], queryFn: () => unwrap(api.GET('/v1/billing')), refetchInterval });
}

/** The workspace's credits now (`credits` of GET /v1/account): available, purchased, ever purchased, spent this month. */
export function useAccountCredits(refetchInterval: number | false = CREDITS_REFRESH_MS) {
  return useQuery({
    queryKey: [currentWorkspaceId(), 'account'],
    queryFn: async () => (await unwrap(api.GET('/v1/account'))).credits,
    refetchInterval,
  });
}

/**
 * Whether the available credits call for a warning: none left at all, or fewer than the
 * workspace's low-credits threshold (the one `billing.credits_low` is sent at), when it has one.
 */
export function creditsAreLow(available: number, threshold: number | null | undefined): boolean {
  return available <= 0 || (threshold != null && available < threshold);
}

/**
 * The low-credits warning: the available credits, the threshold they fell below, and the way to
 * Billing; admins, who may buy, are offered to buy credits there.
 */
export function LowCreditsWarning({ role, onBillingPage = false }: { role: Role; onBillingPage?: boolean }) {
  const credits = useAccountCredits();
  // A workspace without billing (or a read that failed) still warns when nothing is left.
  const billing = useBilling();
  if (!credits.data) return null;
  const available = credits.data.available_credits;
  const threshold = billing.data?.limits.low_credits_threshold ?? null;
  if (!creditsAreLow(available, threshold)) return null;
  return (
    <div className="notice notice-warn" role="alert" data-testid="low-credits">
      <strong>{available <= 0 ? 'No credits left.' : 'Credits are running low.'}</strong>{' '}
      {available <= 0 ? (
        <>New work is refused until credits are added.</>
      ) : (
        <>
          {formatNumber(available)} available, below this workspace's alert threshold of {formatNumber(threshold)}.
        </>
      )}{' '}
      {onBillingPage ? (
        atLeast(role, 'admin') ? (
          <>Buy a pack below.</>
        ) : (
          <>An admin of this workspace can buy credits.</>
        )
      ) : atLeast(role, 'admin') ? (
        <WorkspaceLink className="button primary" to="/billing">
          Buy credits
        </WorkspaceLink>
      ) : (
        <>
          See <WorkspaceLink to="/billing">Billing</WorkspaceLink>; an admin of this workspace can buy credits.
        </>
      )}
    </div>
  );
}

/** An amount in the currency's minor unit (cents for usd) as a price: formatMoney(1000, 'usd') is "$10.00". */
export function formatMoney(amount: number, currency: string): string {
  let format: Intl.NumberFormat;
  try {
    format = new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() });
  } catch {
    return `${formatNumber(amount)} ${currency.toUpperCase()} (minor units)`;
  }
  // The currency's own minor unit: 2 digits for usd and eur, none for jpy, 3 for kwd.
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(amount / 10 ** digits);
}

const BRANDS: Record<string, string> = {
  amex: 'American Express',
  diners: 'Diners Club',
  jcb: 'JCB',
  mastercard: 'Mastercard',
  unionpay: 'UnionPay',
  visa: 'Visa',
};

/** A saved card as people read it: "Visa •••• 4242". */
export function cardName(card: { brand: string; last4: string }): string {
  const brand = BRANDS[card.brand.toLowerCase()] ?? card.brand.charAt(0).toUpperCase() + card.brand.slice(1);
  return `${brand} •••• ${card.last4}`;
}
