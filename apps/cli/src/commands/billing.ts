import type { Command } from 'commander';
import type { Invoice, Plan, Subscription } from '@sdx/sdk';
import { action, integer } from '../args';
import type { Context } from '../context';

/** A price in the currency's minor unit, as people read it. */
function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).format(amount / 100);
  } catch {
    return `${amount} ${currency}`;
  }
}

function subscriptionRecord(sub: Subscription): [string, string | null][] {
  return [
    ['subscription', sub.id],
    ['plan', sub.plan_id],
    ['status', sub.status],
    ['period ends', sub.current_period_end],
    ['cancels at period end', sub.cancel_at_period_end ? 'yes' : 'no'],
    ['scheduled plan', sub.scheduled_plan_id],
  ];
}

/** The live subscription as a change to `planId` left it, with what happens next. */
function printChanged(ctx: Context, sub: Subscription, planId: string): void {
  ctx.out.result(sub, () => {
    ctx.out.record(subscriptionRecord(sub));
    if (sub.scheduled_plan_id) ctx.out.note(`${sub.scheduled_plan_id} applies when the next invoice is paid.`);
    // The plan in force already (the same plan again, or a scheduled downgrade taken back): nothing is invoiced.
    else if (sub.plan_id === planId) ctx.out.note(`${planId} is the plan in force; nothing is invoiced.`);
    else ctx.out.note(`The difference is invoiced now; ${planId} applies when it is paid.`);
  }, [sub.id]);
}

/** `sdx billing`: the plans, subscribing (the Checkout URL), changing, cancelling, invoices (extensions-3.md 2). */
export function registerBilling(program: Command): void {
  const billing = program.command('billing').description("the workspace's monthly plan, subscription and invoices");

  billing
    .command('plans')
    .description('the plans, the current one marked, and the subscription')
    .action(
      action(async (ctx) => {
        const view = await ctx.client().billing.get();
        ctx.out.result(view, () => {
          ctx.out.table<Plan>(view.plans, [
            { header: '', value: (p) => (p.id === view.plan.id ? '*' : '') },
            { header: 'PLAN', value: (p) => p.id },
            { header: 'NAME', value: (p) => p.name },
            { header: 'CREDITS/MONTH', value: (p) => p.monthly_credits.toLocaleString('en-US') },
            { header: 'PRICE/MONTH', value: (p) => money(p.amount, p.currency) },
          ]);
          if (view.subscription) ctx.out.record(subscriptionRecord(view.subscription));
          if (!view.payments_enabled) ctx.out.note('Payments are not configured on this service (run `npm run stripe:fake` locally).');
        }, [view.plan.id]);
      }),
    );

  billing
    .command('subscribe')
    .argument('<plan_id>')
    .description('subscribe to a plan (prints the Checkout URL to pay at), or change the live subscription to it')
    .action(
      action(async (ctx, planId: string) => {
        const answer = await ctx.client().billing.subscribe({ plan_id: planId });
        if (answer.checkout) {
          const { checkout } = answer;
          ctx.out.result(checkout, () => {
            ctx.out.record([
              ['checkout', checkout.checkout_id],
              ['url', checkout.url],
            ]);
            ctx.out.note('Open the URL to pay; the plan applies once Stripe says the first invoice is paid.');
          }, [checkout.url]);
          return;
        }
        printChanged(ctx, answer.subscription, planId);
      }),
    );

  billing
    .command('change')
    .argument('<plan_id>')
    .description('change the live subscription to another plan (an upgrade is invoiced at once; a downgrade waits for the next invoice)')
    .action(
      action(async (ctx, planId: string) => {
        const answer = await ctx.client().billing.subscribe({ plan_id: planId });
        if (answer.checkout) {
          const { checkout } = answer;
          ctx.out.result(checkout, () => {
            ctx.out.note('No live subscription: pay at this Checkout URL to subscribe.');
            ctx.out.record([['url', checkout.url]]);
          }, [checkout.url]);
          return;
        }
        printChanged(ctx, answer.subscription, planId);
      }),
    );

  billing
    .command('cancel')
    .description('cancel the subscription at the end of its period (the workspace is on free then)')
    .action(
      action(async (ctx) => {
        const sub = await ctx.client().billing.cancel();
        ctx.out.result(sub, () => {
          ctx.out.record(subscriptionRecord(sub));
          ctx.out.note(`The plan stays until ${sub.current_period_end ?? 'the end of the period'}.`);
        }, [sub.id]);
      }),
    );

  billing
    .command('invoices')
    .description("the subscription's invoices, newest first")
    .option('-l, --limit <n>', 'at most this many (default 50)', integer())
    .action(
      action(async (ctx, options: { limit?: number }) => {
        const rows: Invoice[] = [];
        for await (const invoice of ctx.client().billing.invoices({ limit: Math.min(options.limit ?? 50, 100) })) {
          rows.push(invoice);
          if (rows.length >= (options.limit ?? 50)) break;
        }
        ctx.out.result(
          rows,
          () =>
            ctx.out.table<Invoice>(rows, [
              { header: 'ID', value: (i) => i.id },
              { header: 'NUMBER', value: (i) => i.number ?? '-' },
              { header: 'STATUS', value: (i) => i.status },
              { header: 'AMOUNT', value: (i) => money(i.amount_due, i.currency) },
              { header: 'CREATED', value: (i) => i.created_at },
              { header: 'URL', value: (i) => i.hosted_invoice_url ?? '-' },
            ]),
          rows.map((i) => i.id),
        );
      }),
    );

  billing
    .command('portal')
    .description("open Stripe's billing portal: prints its URL")
    .action(
      action(async (ctx) => {
        const portal = await ctx.client().billing.portal();
        ctx.out.result(portal, () => ctx.out.record([['url', portal.url]]), [portal.url]);
      }),
    );
}
