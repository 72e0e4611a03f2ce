import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ColumnDef } from '@tanstack/react-table';
import { type FormEvent, useMemo, useState } from 'react';
import { api, ApiProblem, currentWorkspaceId, type Schemas, unwrap } from '../api/client';
import { formatNumber, plural } from '../format';
import { type Billing, cardName } from './credits';
import { DataTable } from './table';
import { ErrorNotice, Field, Loading, SubmitButton } from './ui';

type ApiKey = Schemas['ApiKey'];
type Pack = Schemas['CreditPack'];

/** The error code of a refused call, if it was one. */
export function problemCode(error: unknown): string | null {
  return error instanceof ApiProblem ? error.code : null;
}

/** A count of credits typed in a field: a whole number, or empty for none (null). */
function parseCredits(text: string): { value: number | null; error: null } | { value: null; error: string } {
  const t = text.trim();
  if (t === '') return { value: null, error: null };
  if (!/^\d+$/.test(t)) return { value: null, error: 'A whole number of credits (0 or more), or empty for none.' };
  const value = Number(t);
  if (value > 1_000_000_000_000) return { value: null, error: 'At most 1,000,000,000,000 credits.' };
  return { value, error: null };
}

function packLabel(pack: Pack | undefined, id: string | null): string {
  return pack ? plural(pack.credits, 'credit', 'credits') : (id ?? '—');
}

/** The saved card auto-recharge charges, or how to get one. */
function SavedCard({ card }: { card: Billing['auto_recharge']['payment_method'] }) {
  return (
    <p data-testid="saved-card">
      {card ? (
        <>
          Card: <strong>{cardName(card)}</strong>
        </>
      ) : (
        'No saved card — buy a pack once to save one.'
      )}
    </p>
  );
}

/**
 * Auto-recharge: when the available credits fall below the threshold the service buys the pack
 * with the saved card. Admins edit it (PUT /v1/billing/auto-recharge); other roles read it.
 */
export function AutoRechargeSettings({
  billing,
  canEdit,
  onUnavailable,
}: {
  billing: Billing;
  canEdit: boolean;
  onUnavailable: () => void;
}) {
  const queryClient = useQueryClient();
  const current = billing.auto_recharge;
  const [enabled, setEnabled] = useState(current.enabled);
  const [threshold, setThreshold] = useState(String(current.threshold_credits ?? ''));
  const [packId, setPackId] = useState(current.pack_id ?? billing.packs[0]?.id ?? '');
  const parsed = parseCredits(threshold);
  // The service refuses a threshold at or above the pack (422 invalid_threshold): a recharge would leave the credits below it.
  const packCredits = billing.packs.find((p) => p.id === packId)?.credits;
  const abovePack =
    parsed.value !== null && packCredits !== undefined && parsed.value >= packCredits
      ? `Below the pack's ${formatNumber(packCredits)} credits, or every job would buy it again.`
      : null;
  const save = useMutation({
    mutationFn: () =>
      unwrap(api.PUT('/v1/billing/auto-recharge', { body: { enabled, threshold_credits: parsed.value ?? 0, pack_id: packId } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: [currentWorkspaceId(), 'billing'] }),
    onError: (error) => {
      if (problemCode(error) === 'billing_unavailable') onUnavailable();
    },
  });
  const pack = billing.packs.find((p) => p.id === current.pack_id);
  if (!canEdit) {
    return (
      <>
        <dl className="facts" data-testid="auto-recharge">
          <dt>State</dt>
          <dd>{current.enabled ? 'On' : 'Off'}</dd>
          <dt>Below</dt>
          <dd>{current.threshold_credits == null ? '—' : plural(current.threshold_credits, 'credit', 'credits')} available</dd>
          <dt>Buys</dt>
          <dd>{packLabel(pack, current.pack_id)}</dd>
        </dl>
        <SavedCard card={current.payment_method} />
      </>
    );
  }
  const needsCard = problemCode(save.error) === 'payment_method_required';
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!parsed.error) save.mutate();
  };
  return (
    <form onSubmit={onSubmit} className="stack" aria-label="Auto-recharge" data-testid="auto-recharge">
      <SavedCard card={current.payment_method} />
      <div className="field checkbox-field">
        <label>
          <input
            type="checkbox"
            checked={enabled}
            onChange={(e) => setEnabled(e.target.checked)}
            aria-describedby={needsCard ? 'auto-recharge-card' : undefined}
          />{' '}
          Recharge automatically
        </label>
        {needsCard && (
          <div id="auto-recharge-card" className="field-error" role="alert" data-testid="payment-method-required">
            Auto-recharge needs a saved card: buy a pack once, and the card paid with is saved for it.
          </div>
        )}
      </div>
      <div className="row">
        <Field
          label="When available credits fall below"
          hint="A whole number of credits, below the pack's."
          error={threshold.trim() === '' && enabled ? 'Say below how many credits to recharge.' : (parsed.error ?? abovePack)}
        >
          {(id, describedBy) => (
            <input
              id={id}
              type="number"
              min={0}
              step={1}
              inputMode="numeric"
              aria-describedby={describedBy}
              value={threshold}
              onChange={(e) => setThreshold(e.target.value)}
            />
          )}
        </Field>
        <Field label="Buy">
          {(id) => (
            <select id={id} value={packId} onChange={(e) => setPackId(e.target.value)}>
              {billing.packs.map((p) => (
                <option key={p.id} value={p.id}>
                  {plural(p.credits, 'credit', 'credits')}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <SubmitButton
        pending={save.isPending}
        disabled={Boolean(parsed.error) || Boolean(abovePack) || !packId || (enabled && threshold.trim() === '')}
      >
        Save auto-recharge
      </SubmitButton>
      {save.isSuccess && !save.isPending && <p role="status">Auto-recharge saved: {save.data.enabled ? 'on' : 'off'}.</p>}
      {!needsCard && problemCode(save.error) !== 'billing_unavailable' && <ErrorNotice error={save.error} />}
    </form>
  );
}

/** This month's spend, with a meter against the cap when there is one. */
function MonthSpend({ spent, cap }: { spent: number; cap: number | null }) {
  return (
    <div className="progress" data-testid="month-spend">
      {cap != null && cap > 0 && (
        <meter
          min={0}
          max={cap}
          value={Math.min(spent, cap)}
          low={cap * 0.75}
          high={cap * 0.9}
          optimum={0}
          aria-label="This month's spend against the cap"
        />
      )}
      <span>
        {plural(spent, 'credit', 'credits')} spent this month (UTC)
        {cap != null
          ? ` of the cap of ${formatNumber(cap)}${cap > 0 ? ` (${Math.round((Math.min(spent, cap) / cap) * 100)}%)` : ''}`
          : ', no cap'}
      </span>
    </div>
  );
}

/** The workspace's monthly cap and low-credits threshold (PUT /v1/billing/limits), and this month's spend. */
export function LimitsSettings({ billing, canEdit }: { billing: Billing; canEdit: boolean }) {
  const queryClient = useQueryClient();
  const { limits } = billing;
  const [cap, setCap] = useState(limits.monthly_credit_cap == null ? '' : String(limits.monthly_credit_cap));
  const [low, setLow] = useState(limits.low_credits_threshold == null ? '' : String(limits.low_credits_threshold));
  const capValue = parseCredits(cap);
  const lowValue = parseCredits(low);
  const save = useMutation({
    mutationFn: () =>
      unwrap(api.PUT('/v1/billing/limits', { body: { monthly_credit_cap: capValue.value, low_credits_threshold: lowValue.value } })),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: [currentWorkspaceId(), 'billing'] }),
        queryClient.invalidateQueries({ queryKey: [currentWorkspaceId(), 'account'] }),
      ]),
  });
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (!capValue.error && !lowValue.error) save.mutate();
  };
  return (
    <>
      <MonthSpend spent={billing.month_spent_credits} cap={limits.monthly_credit_cap} />
      {canEdit ? (
        <form onSubmit={onSubmit} className="inline-form" aria-label="Workspace limits">
          <Field label="Monthly credit cap" hint="Empty: no cap. Work past it is refused (402 spend_cap_reached)." error={capValue.error}>
            {(id, describedBy) => (
              <input
                id={id}
                type="number"
                min={0}
                step={1}
                inputMode="numeric"
                aria-describedby={describedBy}
                value={cap}
                onChange={(e) => setCap(e.target.value)}
              />
            )}
          </Field>
          <Field label="Low-credits alert below" hint="Empty: no alert. Warns here and sends billing.credits_low." error={lowValue.error}>
            {(id, describedBy) => (
              <input
                id={id}
                type="number"
                min={0}
                step={1}
                inputMode="numeric"
                aria-describedby={describedBy}
                value={low}
                onChange={(e) => setLow(e.target.value)}
              />
            )}
          </Field>
          <SubmitButton pending={save.isPending} disabled={Boolean(capValue.error || lowValue.error)}>
            Save limits
          </SubmitButton>
        </form>
      ) : (
        <dl className="facts" data-testid="limits">
          <dt>Monthly credit cap</dt>
          <dd>{limits.monthly_credit_cap == null ? 'No cap' : formatNumber(limits.monthly_credit_cap)}</dd>
          <dt>Low-credits alert below</dt>
          <dd>{limits.low_credits_threshold == null ? 'No alert' : formatNumber(limits.low_credits_threshold)}</dd>
        </dl>
      )}
      {save.isSuccess && !save.isPending && <p role="status">Limits saved.</p>}
      <ErrorNotice error={save.error} />
    </>
  );
}

/** A key's monthly cap, edited in its row (PATCH /v1/keys/{key_id}); empty is no cap. */
function KeyCapEditor({ apiKey }: { apiKey: ApiKey }) {
  const queryClient = useQueryClient();
  const [cap, setCap] = useState(apiKey.monthly_credit_cap == null ? '' : String(apiKey.monthly_credit_cap));
  const value = parseCredits(cap);
  const name = apiKey.name ?? apiKey.prefix;
  const save = useMutation({
    mutationFn: () =>
      unwrap(api.PATCH('/v1/keys/{key_id}', { params: { path: { key_id: apiKey.id } }, body: { monthly_credit_cap: value.value } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: [currentWorkspaceId(), 'keys'] }),
  });
  const unchanged = value.value === apiKey.monthly_credit_cap && !value.error;
  return (
    <form
      className="actions"
      aria-label={`Monthly cap of ${name}`}
      onSubmit={(event) => {
        event.preventDefault();
        if (!value.error) save.mutate();
      }}
    >
      <input
        type="number"
        min={0}
        step={1}
        inputMode="numeric"
        aria-label={`Monthly cap of ${name} (empty: no cap)`}
        aria-invalid={value.error ? true : undefined}
        placeholder="no cap"
        value={cap}
        onChange={(e) => setCap(e.target.value)}
      />
      <button type="submit" disabled={save.isPending || Boolean(value.error) || unchanged} aria-label={`Save the cap of ${name}`}>
        Save
      </button>
      {save.isSuccess && unchanged && (
        <span role="status" className="small muted">
          Saved
        </span>
      )}
      {value.error && <span className="field-error">{value.error}</span>}
      <ErrorNotice error={save.error} />
    </form>
  );
}

/** The workspace's API keys that still work, each with its cap and what it spent this month. */
export function KeyCaps({ canEdit }: { canEdit: boolean }) {
  const keys = useQuery({ queryKey: [currentWorkspaceId(), 'keys'], queryFn: () => unwrap(api.GET('/v1/keys')) });
  const live = useMemo(() => (keys.data ?? []).filter((k) => !k.revoked_at), [keys.data]);
  // Kept from render to render: a new cell function would be a new component to React, and the
  // editors in the cells would lose what is being typed whenever the list is read again.
  const columns = useMemo<ColumnDef<ApiKey, unknown>[]>(
    () => [
      { header: 'Name', accessorKey: 'name' },
      { header: 'Key', accessorKey: 'prefix', cell: (c) => <code>{c.row.original.prefix}…</code> },
      { header: 'Role', accessorKey: 'role' },
      { header: 'Spent this month', accessorKey: 'month_spent_credits', cell: (c) => formatNumber(c.row.original.month_spent_credits) },
      {
        header: 'Monthly cap',
        accessorKey: 'monthly_credit_cap',
        enableSorting: !canEdit,
        cell: (c) =>
          canEdit ? (
            <KeyCapEditor key={c.row.original.id} apiKey={c.row.original} />
          ) : c.row.original.monthly_credit_cap == null ? (
            'No cap'
          ) : (
            formatNumber(c.row.original.monthly_credit_cap)
          ),
      },
    ],
    [canEdit],
  );
  if (keys.error) return <ErrorNotice error={keys.error} />;
  if (!keys.data) return <Loading />;
  return (
    <DataTable caption="Spend caps of the API keys" testId="key-caps" empty="No API key in this workspace." data={live} columns={columns} />
  );
}
