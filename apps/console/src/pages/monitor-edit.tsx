import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { useWorkspaceNavigate } from '../paths';
import { api, currentWorkspaceId, type Schemas, unwrap } from '../api/client';
import type { MonitorAlert } from '../api/monitors';
import { duplicatesOf, parseTargets, targetHint } from '../components/targets';
import { ErrorNotice, Field, Loading, PageHeader, SubmitButton } from '../components/ui';
import { browserZone, timeZones } from '../components/zones';
import { formatNumber, plural } from '../format';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';
import { usePlatforms } from './jobs';

type Frequency = Schemas['MonitorFrequency'];
type Day = NonNullable<Schemas['MonitorDayOfWeek']>;
type CatalogOperation = NonNullable<ReturnType<typeof usePlatforms>['data']>[number]['operations'][number];
const RUNS_PER_MONTH: Record<Frequency, number> = { hourly: 730, daily: 30, weekly: 4 };
const DAYS: Day[] = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const PROFILE_METRICS = ['followers_count', 'following_count', 'posts_count'];
const ITEM_METRICS = ['views', 'likes', 'comments', 'shares'];
const CONDITIONS: Array<{ value: MonitorAlert['condition']; label: string }> = [
  { value: 'change_pct_above', label: 'changes by at least (%)' },
  { value: 'above', label: 'rises above' },
  { value: 'below', label: 'falls below' },
  { value: 'new_item', label: 'a new item appears' },
];

/** The most a run can cost, as the service reserves it: every target at the limit (the catalog's price). */
export function creditsPerRun(
  op: Pick<CatalogOperation, 'base_credits' | 'credits_per_result' | 'results_per_credit'>,
  limit: number,
  targets: number,
): number {
  if (limit <= 0) return 0;
  return (op.base_credits + op.credits_per_result * Math.ceil(limit / op.results_per_credit)) * targets;
}

interface AlertDraft {
  metric: string;
  condition: MonitorAlert['condition'];
  threshold: string;
  target: string;
}

export function metricsOf(operation: string): string[] {
  return operation === 'profile' ? PROFILE_METRICS : ITEM_METRICS;
}

export default function MonitorEdit() {
  const { role } = useWorkspace();
  const navigate = useWorkspaceNavigate();
  const queryClient = useQueryClient();
  const platforms = usePlatforms();
  const zones = useMemo(() => timeZones(), []);
  const [name, setName] = useState('');
  const [platform, setPlatform] = useState('');
  const [operation, setOperation] = useState('');
  const [limit, setLimit] = useState(0);
  const [targetsText, setTargetsText] = useState('');
  const [frequency, setFrequency] = useState<Frequency>('daily');
  const [time, setTime] = useState('09:00');
  const [day, setDay] = useState<Day>('monday');
  const [timezone, setTimezone] = useState(browserZone());
  const [alerts, setAlerts] = useState<AlertDraft[]>([]);
  // Only what a monitor can follow: the operations GET /v1/platforms marks monitorable.
  const monitorable = useMemo(
    () =>
      (platforms.data ?? [])
        .map((p) => ({ ...p, operations: p.operations.filter((o) => o.monitorable) }))
        .filter((p) => p.operations.length > 0),
    [platforms.data],
  );
  const chosenPlatform = monitorable.find((p) => p.platform === platform);
  const op = chosenPlatform?.operations.find((o) => o.operation === operation);
  useEffect(() => {
    if (monitorable.length && !chosenPlatform) {
      const first = monitorable[0];
      setPlatform(first.platform);
      setOperation(first.operations[0].operation);
      setLimit(first.operations[0].default_limit);
    } else if (chosenPlatform && !op) {
      setOperation(chosenPlatform.operations[0].operation);
      setLimit(chosenPlatform.operations[0].default_limit);
    }
  }, [monitorable, chosenPlatform, op]);
  const targets = parseTargets(targetsText);
  const duplicates = duplicatesOf(targets);
  const save = useMutation({
    mutationFn: () => {
      const body: Schemas['MonitorCreateRequest'] = {
        ...(name.trim() ? { name: name.trim() } : {}),
        platform,
        operation: operation as Schemas['OperationName'],
        targets,
        ...(limit > 0 && operation !== 'profile' ? { limit } : {}),
        frequency,
        time_of_day: frequency === 'hourly' ? `00:${time.slice(3, 5)}` : time,
        ...(frequency === 'weekly' ? { day_of_week: day } : {}),
        timezone,
        alerts: alerts.map((a) => ({
          metric: a.metric,
          condition: a.condition,
          ...(a.condition !== 'new_item' ? { threshold: Number(a.threshold) } : {}),
          ...(a.target ? { target: a.target } : {}),
        })),
      };
      return unwrap(api.POST('/v1/monitors', { body }));
    },
    onSuccess: async (monitor) => {
      await queryClient.invalidateQueries({ queryKey: [currentWorkspaceId(), 'monitors'] });
      queryClient.setQueryData([currentWorkspaceId(), 'monitor', monitor.id], monitor);
      void navigate(`/monitors/${monitor.id}`);
    },
  });
  if (!atLeast(role, 'member')) {
    return (
      <div>
        <PageHeader title="New monitor" />
        <p>Your role in this workspace ({role}) can read monitors but not create them.</p>
      </div>
    );
  }
  if (platforms.error) return <ErrorNotice error={platforms.error} />;
  if (!platforms.data) return <Loading />;
  const metrics = metricsOf(operation);
  const perRun = op ? creditsPerRun(op, operation === 'profile' ? 1 : limit, targets.length) : 0;
  const alertsValid = alerts.every(
    (a) => a.condition === 'new_item' || (a.threshold.trim() !== '' && Number.isFinite(Number(a.threshold))),
  );
  const setAlert = (i: number, patch: Partial<AlertDraft>) => setAlerts(alerts.map((a, j) => (j === i ? { ...a, ...patch } : a)));
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <div>
      <PageHeader title="New monitor" />
      <form onSubmit={onSubmit} className="stack" noValidate>
        <Field label="Name" hint="Optional; the platform and operation when left empty.">
          {(id, describedBy) => (
            <input id={id} maxLength={120} aria-describedby={describedBy} value={name} onChange={(e) => setName(e.target.value)} />
          )}
        </Field>
        <div className="row">
          <Field label="Platform">
            {(id) => (
              <select
                id={id}
                value={platform}
                onChange={(e) => {
                  const next = monitorable.find((p) => p.platform === e.target.value)!;
                  setPlatform(next.platform);
                  setOperation(next.operations[0].operation);
                  setLimit(next.operations[0].default_limit);
                }}
              >
                {monitorable.map((p) => (
                  <option key={p.platform} value={p.platform}>
                    {p.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Operation" hint="Only the operations a monitor can follow: profiles, and a target's own posts or videos.">
            {(id, describedBy) => (
              <select
                id={id}
                aria-describedby={describedBy}
                value={operation}
                onChange={(e) => {
                  setOperation(e.target.value);
                  setLimit(chosenPlatform?.operations.find((o) => o.operation === e.target.value)?.default_limit ?? 0);
                  setAlerts([]);
                }}
              >
                {chosenPlatform?.operations.map((o) => (
                  <option key={o.operation} value={o.operation}>
                    {o.operation.replace(/_/g, ' ')}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {operation !== 'profile' && op && (
            <Field label="Items per target" hint={`The latest items followed per target; at most ${formatNumber(op.max_results)}.`}>
              {(id, describedBy) => (
                <input
                  id={id}
                  type="number"
                  min={1}
                  max={op.max_results}
                  aria-describedby={describedBy}
                  value={limit || ''}
                  onChange={(e) => setLimit(Number(e.target.value))}
                />
              )}
            </Field>
          )}
        </div>
        <Field
          label="Targets, one per line"
          hint={`${targetHint(platform, operation)} 1 to 1,000 targets.`}
          error={duplicates.length ? `Each target may appear once (compared without case). Duplicated: ${duplicates.join(', ')}.` : null}
        >
          {(id, describedBy) => (
            <textarea
              id={id}
              rows={4}
              aria-describedby={describedBy}
              value={targetsText}
              onChange={(e) => setTargetsText(e.target.value)}
            />
          )}
        </Field>
        <div className="row">
          <Field label="Runs">
            {(id) => (
              <select id={id} value={frequency} onChange={(e) => setFrequency(e.target.value as Frequency)}>
                <option value="hourly">Every hour</option>
                <option value="daily">Every day</option>
                <option value="weekly">Every week</option>
              </select>
            )}
          </Field>
          {frequency === 'weekly' && (
            <Field label="Day">
              {(id) => (
                <select id={id} value={day} onChange={(e) => setDay(e.target.value as Day)}>
                  {DAYS.map((d) => (
                    <option key={d} value={d}>
                      {d}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          )}
          <Field label={frequency === 'hourly' ? 'Minutes past the hour (from this time)' : 'Time'}>
            {(id) => <input id={id} type="time" value={time} onChange={(e) => setTime(e.target.value)} />}
          </Field>
          <Field label="Time zone">
            {(id) => (
              <select id={id} value={timezone} onChange={(e) => setTimezone(e.target.value)}>
                {zones.map((z) => (
                  <option key={z}>{z}</option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <fieldset className="stack">
          <legend>Alerts (sent to your webhooks as monitor.alert)</legend>
          {alerts.map((a, i) => (
            <div className="row" key={i} data-testid="alert-row">
              <Field label={`Alert ${i + 1}: metric`}>
                {(id) => (
                  <select id={id} value={a.metric} onChange={(e) => setAlert(i, { metric: e.target.value })}>
                    {metrics.map((m) => (
                      <option key={m}>{m}</option>
                    ))}
                  </select>
                )}
              </Field>
              <Field label={`Alert ${i + 1}: when`}>
                {(id) => (
                  <select
                    id={id}
                    value={a.condition}
                    onChange={(e) => setAlert(i, { condition: e.target.value as AlertDraft['condition'] })}
                  >
                    {CONDITIONS.filter((c) => c.value !== 'new_item' || operation !== 'profile').map((c) => (
                      <option key={c.value} value={c.value}>
                        {c.label}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
              {a.condition !== 'new_item' && (
                <Field label={`Alert ${i + 1}: threshold`}>
                  {(id) => (
                    <input
                      id={id}
                      type="number"
                      step="any"
                      value={a.threshold}
                      onChange={(e) => setAlert(i, { threshold: e.target.value })}
                    />
                  )}
                </Field>
              )}
              <Field label={`Alert ${i + 1}: target`}>
                {(id) => (
                  <select id={id} value={a.target} onChange={(e) => setAlert(i, { target: e.target.value })}>
                    <option value="">Every target</option>
                    {targets.map((t) => (
                      <option key={t}>{t}</option>
                    ))}
                  </select>
                )}
              </Field>
              <button type="button" className="link" onClick={() => setAlerts(alerts.filter((_, j) => j !== i))}>
                Remove alert {i + 1}
              </button>
            </div>
          ))}
          {alerts.length < 20 && (
            <button
              type="button"
              onClick={() => setAlerts([...alerts, { metric: metrics[0], condition: 'change_pct_above', threshold: '10', target: '' }])}
            >
              Add an alert
            </button>
          )}
        </fieldset>
        <div className="quote" role="status" data-testid="monitor-estimate">
          <p>
            At most <strong>{plural(perRun, 'credit', 'credits')} per run</strong> and{' '}
            <strong>{plural(perRun * RUNS_PER_MONTH[frequency], 'credit', 'credits')} per month</strong> (
            {plural(targets.length, 'target', 'targets')}, {formatNumber(RUNS_PER_MONTH[frequency])} runs a month); each run reserves this
            and you pay only for what is delivered.
          </p>
        </div>
        <ErrorNotice error={save.error} />
        <SubmitButton
          pending={save.isPending}
          disabled={!op || targets.length === 0 || targets.length > 1000 || duplicates.length > 0 || !alertsValid}
        >
          Create monitor
        </SubmitButton>
      </form>
    </div>
  );
}
