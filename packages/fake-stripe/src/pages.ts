import { formatAmount } from './money';
import { type Charge, type CheckoutSession, type LineItem, type PaymentIntent } from './objects';
import { type Delivery } from './webhooks';

/** The fake's own pages: a hosted Checkout page per session, and a dashboard. Plain HTML, no assets. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f6f8fa;color:#1a1f36}
main{max-width:960px;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002}
.narrow{max-width:440px}
.badge{display:inline-block;background:#ffde92;color:#5e3a00;border-radius:4px;padding:0 .5em;font-size:12px;font-weight:600}
table{border-collapse:collapse;width:100%;margin:1rem 0}
td,th{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #e3e8ee;font-size:14px;vertical-align:top}
.total{font-size:1.4rem;font-weight:600}
button{background:#635bff;color:#fff;border:0;border-radius:6px;padding:.6rem 1.2rem;font-size:15px;cursor:pointer}
button.secondary{background:#fff;color:#635bff;border:1px solid #635bff;padding:.2rem .6rem;font-size:13px}
form{display:inline}
.paid{color:#0a7d32;font-weight:600;font-size:1.2rem}
code{font-size:13px;overflow-wrap:anywhere}
`;

function layout(title: string, body: string, narrow = false): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main${narrow ? ' class="narrow"' : ''}><span class="badge">TEST MODE · fake Stripe</span>${body}</main></body></html>`;
}

export interface CheckoutView {
  session: CheckoutSession;
  lineItems: LineItem[];
  charge: Charge | null;
}

export function checkoutPage({ session, lineItems, charge }: CheckoutView): string {
  const rows = lineItems
    .map(
      (item) =>
        `<tr><td>${escapeHtml(item.description)}</td><td>× ${item.quantity}</td><td>${escapeHtml(formatAmount(item.amount_total, item.currency))}</td></tr>`,
    )
    .join('');
  const total = formatAmount(session.amount_total, session.currency);
  let actions: string;
  if (session.status === 'open') {
    actions = `<form method="post" action="/checkout/${escapeHtml(session.id)}/pay"><button type="submit">Pay ${escapeHtml(total)}</button></form>`;
    if (session.cancel_url) actions += ` <a href="${escapeHtml(session.cancel_url)}">Cancel</a>`;
  } else if (session.status === 'complete') {
    const refunded =
      charge && charge.amount_refunded > 0 ? ` · refunded ${escapeHtml(formatAmount(charge.amount_refunded, charge.currency))}` : '';
    actions = `<p class="paid">${session.payment_status === 'paid' ? 'Paid' : 'Processing'}${refunded}</p>`;
    if (charge && charge.status === 'succeeded' && charge.amount_refunded < charge.amount) {
      actions += `<form method="post" action="/checkout/${escapeHtml(session.id)}/refund"><button type="submit" class="secondary">Refund</button></form> `;
    }
    actions += `<a href="${escapeHtml(session.success_url.replace('{CHECKOUT_SESSION_ID}', session.id))}">Return to the merchant</a>`;
  } else actions = '<p>This Checkout Session has expired.</p>';
  return layout(
    'Checkout',
    `<h1>Checkout</h1><table>${rows}</table><p class="total">Total ${escapeHtml(total)}</p>${actions}<p><small>Session <code>${escapeHtml(session.id)}</code></small></p>`,
    true,
  );
}

export interface DashboardView {
  url: string;
  webhookUrl: string | null;
  sessions: CheckoutSession[];
  intents: PaymentIntent[];
  charges: Map<string, Charge>;
  events: Array<{ id: string; type: string; created: number }>;
  deliveries: Delivery[];
}

export function dashboardPage(view: DashboardView): string {
  const sessions = view.sessions
    .map(
      (s) =>
        `<tr><td><a href="/checkout/${escapeHtml(s.id)}"><code>${escapeHtml(s.id.slice(0, 24))}…</code></a></td><td>${escapeHtml(s.status)}</td><td>${escapeHtml(s.payment_status)}</td><td>${escapeHtml(formatAmount(s.amount_total, s.currency))}</td><td>${escapeHtml(s.client_reference_id ?? '')}</td></tr>`,
    )
    .join('');
  const intents = view.intents
    .map((pi) => {
      const charge = pi.latest_charge ? view.charges.get(pi.latest_charge) : undefined;
      const refundable = pi.status === 'succeeded' && charge && charge.amount_refunded < charge.amount;
      const refund = refundable
        ? `<form method="post" action="/payment_intents/${escapeHtml(pi.id)}/refund"><button type="submit" class="secondary">Refund</button></form>`
        : '';
      return `<tr><td><code>${escapeHtml(pi.id)}</code></td><td>${escapeHtml(pi.status)}</td><td>${escapeHtml(formatAmount(pi.amount, pi.currency))}</td><td>${charge ? escapeHtml(formatAmount(charge.amount_refunded, charge.currency)) : ''}</td><td>${escapeHtml(pi.metadata.kind ?? 'checkout')}</td><td>${refund}</td></tr>`;
    })
    .join('');
  const events = [...view.events]
    .reverse()
    .slice(0, 100)
    .map((e) => {
      const attempts = view.deliveries.filter((d) => d.eventId === e.id).map((d) => escapeHtml(d.status ?? d.error ?? '?'));
      return `<tr><td><code>${escapeHtml(e.id)}</code></td><td>${escapeHtml(e.type)}</td><td>${new Date(e.created * 1000).toISOString()}</td><td>${attempts.join(', ') || '—'}</td></tr>`;
    })
    .join('');
  return layout(
    'Fake Stripe',
    `<h1>Fake Stripe</h1><p>API base <code>${escapeHtml(view.url)}</code> · webhooks to <code>${escapeHtml(view.webhookUrl ?? 'nowhere')}</code></p>
<h2>Checkout Sessions</h2><table><tr><th>ID</th><th>Status</th><th>Payment</th><th>Amount</th><th>Reference</th></tr>${sessions}</table>
<h2>Payment Intents</h2><table><tr><th>ID</th><th>Status</th><th>Amount</th><th>Refunded</th><th>Kind</th><th></th></tr>${intents}</table>
<h2>Events</h2><table><tr><th>ID</th><th>Type</th><th>Created</th><th>Deliveries</th></tr>${events}</table>`,
  );
}
