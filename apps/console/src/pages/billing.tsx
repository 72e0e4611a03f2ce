import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useHref, useSearchParams } from 'react-router';
import { api, currentWorkspaceId, type Schemas, unwrap } from '../api/client';
import { Plans } from '../components/billing-plans';
import { AutoRechargeSettings, KeyCaps, LimitsSettings, problemCode } from '../components/billing-settings';
import { type Billing, formatMoney, LowCreditsWarning, useAccountCredits, useBilling } from '../components/credits';
import { DataTable } from '../components/table';
import { ErrorNotice, formatDate, formatNumber, Loading, PageHeader } from '../components/ui';
import { plural } from '../format';
import { useAt } from '../paths';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

type Payment = Schemas['Payment'];

/** After a checkout, how long and how often the page reads the credits again, until Stripe's confirmation lands. */
const CONFIRMATION_WAIT_MS = 60_000;
const CONFIRMATION_POLL_MS = 2_000;
const PAYMENTS_PAGE = 20;

/**
 * Back from Stripe's checkout page (`?checkout=success`): the credits arrive when Stripe's signed
 * webhook does, not with the browser, so the page reads them again every 2 s until the credits
 * ever bought rise (or a minute has passed), then reads everything once more.
 */
function useConfirmationPolling(returned: boolean, lifetimePurchased: number | undefined): boolean {
  const queryClient = useQueryClient();
  const [polling, setPolling] = useState(returned);
  const first = useRef<number | undefined>(undefined);
  useEffect(() => {
    setPolling(returned);
    if (!returned) return;
    const timer = setTimeout(() => setPolling(false), CONFIRMATION_WAIT_MS);
    return () => clearTimeout(timer);
  }, [returned]);
  useEffect(() => {
    if (!polling || lifetimePurchased === undefined) return;
    if (first.current === undefined) first.current = lifetimePurchased;
    else if (lifetimePurchased > first.current) setPolling(false);
  }, [polling, lifetimePurchased]);
  const wasPolling = useRef(polling);
  useEffect(() => {
    if (wasPolling.current && !polling) {
      const ws = currentWorkspaceId();
      for (const part of ['billing', 'account', 'usage', 'keys']) void queryClient.invalidateQueries({ queryKey: [ws, part] });
    }
    wasPolling.current = polling;
  }, [polling, queryClient]);
  return polling;
}

export default function BillingPage() {
  const { role } = useWorkspace();
  const isAdmin = atLeast(role, 'admin');
  const [params, setParams] = useSearchParams();
  const checkout = params.get('checkout');
  const [lifetime, setLifetime] = useState<number | undefined>(undefined);
  const polling = useConfirmationPolling(checkout === 'success', lifetime);
  const every = polling ? CONFIRMATION_POLL_MS : false;
  const billing = useBilling(every);
  const credits = useAccountCredits(every || undefined);
  useEffect(() => setLifetime(credits.data?.lifetime_purchased), [credits.data?.lifetime_purchased]);
  const [refused, setUnavailable] = useState(false);
  // Known before any click: GET /v1/billing says whether payments work on this service.
  const unavailable = refused || billing.data?.payments_enabled === false;
  const subscription = params.get('subscription');
  const dismiss = () =>
    setParams(
      (p) => {
        p.delete('checkout');
        return p;
      },
      { replace: true },
    );
  return (
    <div>
      <PageHeader title="Billing" />
      <p className="muted">
        Buy credits with a card through Stripe, recharge automatically, and cap what the workspace and each API key may spend in a month.
      </p>
      {checkout === 'success' && (
        <div className="notice" role="status" data-testid="checkout-notice">
          <strong>Payment received — credits appear as soon as Stripe confirms it.</strong>{' '}
          {polling ? <span className="muted small">Checking for them…</span> : null}{' '}
          <button type="button" className="link" onClick={dismiss}>
            Dismiss
          </button>
        </div>
      )}
      {checkout === 'cancelled' && (
        <div className="notice" role="status" data-testid="checkout-notice">
          Checkout cancelled: nothing was charged.{' '}
          <button type="button" className="link" onClick={dismiss}>
            Dismiss
          </button>
        </div>
      )}
      {subscription === 'success' && (
        <div className="notice" role="status" data-testid="subscription-notice">
          Subscribed — the plan applies as soon as Stripe confirms the first payment.
        </div>
      )}
      <LowCreditsWarning role={role} onBillingPage />
      {unavailable && (
        <div className="notice notice-warn" role="alert" data-testid="billing-unavailable">
          <strong>Payments are not configured on this service.</strong> Credits and plans cannot be bought here for now; the limits below
          still apply. To turn billing on locally, run <code>npm run stripe:fake</code> and start the service with the three{' '}
          <code>STRIPE_*</code> variables it prints (see docs/billing.md).
        </div>
      )}

      <section aria-labelledby="credits-title">
        <h2 id="credits-title">Credits</h2>
        <ErrorNotice error={credits.error} />
        {credits.data ? (
          <div className="cards">
            <div className="card">
              <h3 className="small muted">Available now</h3>
              <p className="figure" data-testid="available-credits">
                {formatNumber(credits.data.available_credits)}
              </p>
              <p className="muted small">plan, promotional and purchased, less what running work holds</p>
            </div>
            <div className="card">
              <h3 className="small muted">Purchased</h3>
              <p className="figure" data-testid="purchased-credits">
                {formatNumber(credits.data.purchased_credits)}
              </p>
              <p className="muted small">never expire · {formatNumber(credits.data.lifetime_purchased)} bought in all</p>
            </div>
          </div>
        ) : (
          !credits.error && <Loading />
        )}
      </section>

      <ErrorNotice error={billing.error} />
      {billing.data ? (
        <>
          <section aria-labelledby="plans-title">
            <h2 id="plans-title">Plan</h2>
            <p className="muted small">
              A monthly plan sets the credits of each calendar month; unused plan credits do not carry over. Packs add credits that never
              expire.
            </p>
            <Plans billing={billing.data} canEdit={isAdmin} enabled={!unavailable} />
          </section>
          <section aria-labelledby="packs-title">
            <h2 id="packs-title">Credit packs</h2>
            <Packs billing={billing.data} canBuy={isAdmin} unavailable={unavailable} onUnavailable={() => setUnavailable(true)} />
          </section>
          {isAdmin && (
            <section aria-labelledby="payments-title">
              <h2 id="payments-title">Payments</h2>
              <Payments every={every} packs={billing.data.packs} onSettled={() => setLifetime(Number.MAX_SAFE_INTEGER)} />
            </section>
          )}
          <section aria-labelledby="recharge-title">
            <h2 id="recharge-title">Auto-recharge</h2>
            <p className="muted small">
              When the available credits fall below the threshold, the saved card buys the pack, once at a time. A failed charge turns it
              off.
            </p>
            <AutoRechargeSettings billing={billing.data} canEdit={isAdmin && !unavailable} onUnavailable={() => setUnavailable(true)} />
          </section>
          <section aria-labelledby="caps-title">
            <h2 id="caps-title">Spend caps</h2>
            <p className="muted small">
              Caps count what work reserves or is charged in the UTC calendar month; released credits do not count. Cached answers always
              pass.
            </p>
            <LimitsSettings billing={billing.data} canEdit={isAdmin} />
            <h3>API keys</h3>
            <KeyCaps canEdit={isAdmin} />
          </section>
        </>
      ) : (
        !billing.error && <Loading />
      )}
    </div>
  );
}

/** The packs on sale, each with its price and, for admins, a Buy button that goes to Stripe's checkout. */
function Packs({
  billing,
  canBuy,
  unavailable,
  onUnavailable,
}: {
  billing: Billing;
  canBuy: boolean;
  unavailable: boolean;
  onUnavailable: () => void;
}) {
  // Stripe sends the buyer back to this workspace's Billing page, whichever is chosen meanwhile.
  const billingPage = useHref(useAt()('/billing'));
  const back = (outcome: 'success' | 'cancelled') => new URL(`${billingPage}?checkout=${outcome}`, window.location.origin).toString();
  const buy = useMutation({
    mutationFn: (packId: string) =>
      unwrap(api.POST('/v1/billing/checkout', { body: { pack_id: packId, success_url: back('success'), cancel_url: back('cancelled') } })),
    onSuccess: (session) => window.location.assign(session.url),
    onError: (error) => {
      if (problemCode(error) === 'billing_unavailable') onUnavailable();
    },
  });
  if (billing.packs.length === 0) return <p className="empty">No pack is on sale.</p>;
  return (
    <>
      <div className="cards" data-testid="packs">
        {billing.packs.map((pack) => (
          <div className="card" key={pack.id} data-testid={`pack-${pack.id}`}>
            <h3>{plural(pack.credits, 'credit', 'credits')}</h3>
            <p className="figure">{formatMoney(pack.amount, pack.currency)}</p>
            <p className="muted small">
              {formatMoney(Math.round((pack.amount * 1000) / pack.credits), pack.currency)} per 1,000 credits · never expire
            </p>
            {canBuy && (
              <button
                type="button"
                className="primary"
                disabled={unavailable || buy.isPending || buy.isSuccess}
                aria-busy={buy.isPending && buy.variables === pack.id}
                onClick={() => buy.mutate(pack.id)}
              >
                {buy.variables === pack.id && (buy.isPending || buy.isSuccess)
                  ? 'Going to checkout…'
                  : `Buy ${plural(pack.credits, 'credit', 'credits')}`}
              </button>
            )}
          </div>
        ))}
      </div>
      {!canBuy && <p className="muted small">An admin of this workspace can buy packs.</p>}
      {problemCode(buy.error) !== 'billing_unavailable' && <ErrorNotice error={buy.error} />}
    </>
  );
}

const PAYMENT_TONE: Record<Payment['status'], string> = {
  pending: 'neutral',
  paid: 'ok',
  partially_refunded: 'warn',
  refunded: 'muted',
  failed: 'bad',
  mismatch: 'bad',
};

/** The workspace's payments, newest first, a page at a time ("Load more"). */
function Payments({ every, packs, onSettled }: { every: number | false; packs: Billing['packs']; onSettled: () => void }) {
  const payments = useInfiniteQuery({
    queryKey: [currentWorkspaceId(), 'billing', 'payments'],
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/v1/billing/payments', {
          params: { query: { limit: PAYMENTS_PAGE, ...(pageParam ? { starting_after: pageParam } : {}) } },
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => (page.has_more ? (page.data.at(-1)?.id ?? null) : null),
    refetchInterval: every,
  });
  // The banner after a checkout settles once the newest payment is no longer pending (its credits arrived, or it failed).
  const newest = payments.data?.pages[0]?.data[0];
  const settled = every !== false && newest !== undefined && newest.status !== 'pending';
  useEffect(() => {
    if (settled) onSettled();
  }, [settled, onSettled]);
  if (payments.error && !payments.data) return <ErrorNotice error={payments.error} />;
  if (!payments.data) return <Loading />;
  const packName = (id: string) => {
    const pack = packs.find((p) => p.id === id);
    return pack ? `${plural(pack.credits, 'credit', 'credits')} pack` : id;
  };
  return (
    <>
      <DataTable
        caption="Payments"
        testId="payments-table"
        empty="No payment yet."
        data={payments.data.pages.flatMap((page) => page.data)}
        columns={[
          { header: 'Date', accessorKey: 'created_at', cell: (c) => formatDate(c.row.original.created_at) },
          { header: 'Kind', accessorKey: 'kind', cell: (c) => (c.row.original.kind === 'auto_recharge' ? 'Auto-recharge' : 'Checkout') },
          { header: 'Pack', accessorKey: 'pack_id', cell: (c) => packName(c.row.original.pack_id) },
          { header: 'Credits', accessorKey: 'credits', cell: (c) => formatNumber(c.row.original.credits) },
          { header: 'Amount', accessorKey: 'amount', cell: (c) => formatMoney(c.row.original.amount, c.row.original.currency) },
          {
            header: 'Status',
            accessorKey: 'status',
            cell: (c) => (
              <span className={`badge badge-${PAYMENT_TONE[c.row.original.status] ?? 'neutral'}`} data-testid="payment-status">
                {c.row.original.status.replace(/_/g, ' ')}
              </span>
            ),
          },
          {
            header: 'Refunds',
            id: 'refunds',
            accessorFn: (p) => p.refunded_credits,
            cell: (c) => <Refunds payment={c.row.original} />,
          },
        ]}
      />
      <ErrorNotice error={payments.error} />
      {payments.hasNextPage && (
        <button
          type="button"
          onClick={() => void payments.fetchNextPage()}
          disabled={payments.isFetchingNextPage}
          aria-busy={payments.isFetchingNextPage}
        >
          {payments.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      )}
    </>
  );
}

/** What refunds reversed, and the part that could not be taken back (already spent), when there is any. */
function Refunds({ payment }: { payment: Payment }) {
  if (payment.refunded_credits === 0 && payment.refund_shortfall_credits === 0) return <span className="muted">—</span>;
  return (
    <>
      {plural(payment.refunded_credits, 'credit', 'credits')} reversed
      {payment.refund_shortfall_credits > 0 ? (
        <span className="small"> ({formatNumber(payment.refund_shortfall_credits)} already spent, not taken back)</span>
      ) : null}
    </>
  );
}
