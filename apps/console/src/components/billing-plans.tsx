import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useHref } from 'react-router';
import { api, currentWorkspaceId, type Schemas, unwrap } from '../api/client';
import { useAt } from '../paths';
import { problemCode } from './billing-settings';
import { type Billing, formatMoney } from './credits';
import { DataTable } from './table';
import { ErrorNotice, formatDate, formatNumber, Loading } from './ui';

type Plan = Schemas['Plan'];
type Invoice = Schemas['Invoice'];
type Subscription = NonNullable<Schemas['Subscription']>;

const INVOICES_PAGE = 20;

/** Dearer than the plan in force (by price, then credits): an upgrade, invoiced at once. */
function isUpgrade(from: Plan, to: Plan): boolean {
  return to.amount !== from.amount ? to.amount > from.amount : to.monthly_credits > from.monthly_credits;
}

function until(sub: Subscription | null): string {
  return sub?.current_period_end ? formatDate(sub.current_period_end) : 'the end of the period';
}

/** What a click on a plan will do, said before it is done (the confirmation's text). */
export function planChangeText(current: Plan, target: Plan, sub: Subscription | null): string {
  const price = `${formatMoney(target.amount, target.currency)} a month`;
  if (!sub)
    return `Subscribe to ${target.name}: ${price} for ${formatNumber(target.monthly_credits)} credits a month, charged now through Stripe Checkout and every month after. The plan applies once the first payment is confirmed.`;
  if (target.id === current.id) return `Keep ${target.name} (${price}): nothing is charged now, and the scheduled change is called off.`;
  if (isUpgrade(current, target)) {
    return `Upgrade to ${target.name} (${price}): the difference for the rest of this period is charged now; ${formatNumber(target.monthly_credits)} credits a month apply once that payment is confirmed, and ${price} from ${until(sub)}.`;
  }
  return `Change to ${target.name} (${price}) from ${until(sub)}: nothing is charged or refunded now; ${current.name} and its ${formatNumber(current.monthly_credits)} credits a month stay until then.`;
}

/**
 * The monthly plans (extensions-3.md 2): a card per plan with the current one marked, Subscribe /
 * Change / Cancel (each confirming what it costs and when), "Manage billing" (Stripe's portal)
 * and the invoices. Without payments (`payments_enabled: false`) the buttons are off.
 */
export function Plans({ billing, canEdit, enabled }: { billing: Billing; canEdit: boolean; enabled: boolean }) {
  const queryClient = useQueryClient();
  const billingPage = useHref(useAt()('/billing'));
  const back = (outcome: string) => new URL(`${billingPage}?subscription=${outcome}`, window.location.origin).toString();
  const refresh = () => {
    const ws = currentWorkspaceId();
    for (const part of ['billing', 'account', 'usage']) void queryClient.invalidateQueries({ queryKey: [ws, part] });
  };
  const sub =
    billing.subscription && (billing.subscription.status === 'active' || billing.subscription.status === 'past_due')
      ? billing.subscription
      : null;
  const change = useMutation({
    mutationFn: (planId: string) =>
      unwrap(
        api.POST('/v1/billing/subscription', { body: { plan_id: planId, success_url: back('success'), cancel_url: back('cancelled') } }),
      ),
    onSuccess: (answer) => {
      // 201: a Checkout Session to pay at; 200: the live subscription, changed.
      if (answer && 'checkout_id' in answer) window.location.assign(answer.url);
      else refresh();
    },
  });
  const cancel = useMutation({ mutationFn: () => unwrap(api.DELETE('/v1/billing/subscription')), onSuccess: refresh });
  const portal = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/v1/billing/portal', { body: { return_url: new URL(billingPage, window.location.origin).toString() } })),
    onSuccess: (session) => window.location.assign(session.url),
  });
  const busy = change.isPending || cancel.isPending || portal.isPending;
  const choose = (plan: Plan) => {
    if (window.confirm(planChangeText(billing.plan, plan, sub))) change.mutate(plan.id);
  };
  const stop = () => {
    if (
      window.confirm(
        `Cancel the subscription: ${billing.plan.name} stays until ${until(sub)}, then the workspace is on the free plan. Nothing is refunded.`,
      )
    )
      cancel.mutate();
  };
  return (
    <>
      {sub && (
        <p data-testid="subscription-state">
          {billing.plan.name} plan,{' '}
          {sub.status === 'past_due' ? <strong>payment failed — update the card in Manage billing</strong> : sub.status}
          {sub.cancel_at_period_end ? `, ends ${until(sub)}` : `, renews ${until(sub)}`}
          {sub.scheduled_plan_id
            ? ` · changes to ${billing.plans.find((p) => p.id === sub.scheduled_plan_id)?.name ?? sub.scheduled_plan_id} then`
            : ''}
          .
        </p>
      )}
      <div className="cards" data-testid="plans">
        {billing.plans.map((plan) => {
          const current = plan.id === billing.plan.id;
          const priced = sub ? (sub.scheduled_plan_id ?? billing.plan.id) : billing.plan.id;
          return (
            <div
              className={current ? 'card card-current' : 'card'}
              key={plan.id}
              data-testid={`plan-${plan.id}`}
              aria-current={current ? 'true' : undefined}
            >
              <h3>
                {plan.name} {current && <span className="badge badge-ok">Current plan</span>}
              </h3>
              <p className="figure">{plan.amount === 0 ? 'Free' : `${formatMoney(plan.amount, plan.currency)}/mo`}</p>
              <p className="muted small">{formatNumber(plan.monthly_credits)} credits a month</p>
              {canEdit && plan.id !== 'free' && plan.id !== priced && (
                <button type="button" className={sub ? '' : 'primary'} disabled={!enabled || busy} onClick={() => choose(plan)}>
                  {!sub ? `Subscribe to ${plan.name}` : current ? `Keep ${plan.name}` : `Change to ${plan.name}`}
                </button>
              )}
            </div>
          );
        })}
      </div>
      {canEdit && (
        <div className="row">
          {sub && !sub.cancel_at_period_end && (
            <button type="button" disabled={!enabled || busy} onClick={stop}>
              Cancel subscription
            </button>
          )}
          <button type="button" disabled={!enabled || busy} onClick={() => portal.mutate()} aria-busy={portal.isPending}>
            Manage billing
          </button>
        </div>
      )}
      {!canEdit && <p className="muted small">An admin of this workspace can change the plan.</p>}
      {[change.error, cancel.error, portal.error].map((error, i) =>
        problemCode(error) === 'billing_unavailable' ? null : <ErrorNotice key={i} error={error} />,
      )}
      {canEdit && <Invoices />}
    </>
  );
}

/** The subscription's invoices, newest first, each with Stripe's page. */
function Invoices() {
  const invoices = useInfiniteQuery({
    queryKey: [currentWorkspaceId(), 'billing', 'invoices'],
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/v1/billing/invoices', {
          params: { query: { limit: INVOICES_PAGE, ...(pageParam ? { starting_after: pageParam } : {}) } },
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => (page.has_more ? (page.data.at(-1)?.id ?? null) : null),
  });
  if (invoices.error && !invoices.data) return <ErrorNotice error={invoices.error} />;
  if (!invoices.data) return <Loading />;
  return (
    <>
      <h3>Invoices</h3>
      <DataTable<Invoice>
        caption="Invoices"
        testId="invoices-table"
        empty="No invoice yet."
        data={invoices.data.pages.flatMap((page) => page.data)}
        columns={[
          { header: 'Date', accessorKey: 'created_at', cell: (c) => formatDate(c.row.original.created_at) },
          { header: 'Number', accessorKey: 'number', cell: (c) => c.row.original.number ?? '—' },
          { header: 'Amount', accessorKey: 'amount_due', cell: (c) => formatMoney(c.row.original.amount_due, c.row.original.currency) },
          { header: 'Status', accessorKey: 'status', cell: (c) => c.row.original.status },
          {
            header: 'Invoice',
            id: 'link',
            accessorFn: (i) => i.hosted_invoice_url,
            cell: (c) =>
              c.row.original.hosted_invoice_url ? (
                <a href={c.row.original.hosted_invoice_url} target="_blank" rel="noreferrer">
                  View
                </a>
              ) : (
                '—'
              ),
          },
        ]}
      />
      {invoices.hasNextPage && (
        <button type="button" onClick={() => void invoices.fetchNextPage()} disabled={invoices.isFetchingNextPage}>
          Load more
        </button>
      )}
    </>
  );
}
