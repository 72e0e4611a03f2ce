import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { useParams } from 'react-router';
import { useWorkspaceNavigate } from '../paths';
import { api, currentWorkspaceId, type Schedule, type Schemas, unwrap } from '../api/client';
import { DataTable } from '../components/table';
import { duplicatesOf, parseTargets, targetHint } from '../components/targets';
import { ErrorNotice, Field, Loading, PageHeader, SubmitButton } from '../components/ui';
import { browserZone, inZone, timeZones, wallTime, zonedIso } from '../components/zones';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';
import { RecipeFields } from './new-work';

type Frequency = Schedule['frequency'];
const FREQUENCIES: Array<{ value: Frequency; label: string }> = [
  { value: 'once', label: 'Once' },
  { value: 'daily', label: 'Every day' },
  { value: 'weekly', label: 'Every week, same weekday' },
  { value: 'monthly', label: 'Every month, same day' },
];

interface Draft {
  name: string;
  platform: string;
  operation: string;
  limit: number;
  targetsText: string;
  frequency: Frequency;
  timezone: string;
  wall: string;
  delivery: 'all' | 'new_only';
}

function tomorrowNine(): string {
  const d = new Date(Date.now() + 24 * 3600_000);
  return `${wallTime(d, browserZone()).slice(0, 10)}T09:00`;
}

function draftOf(s: Schedule | undefined): Draft {
  // A new schedule's limit: its operation's default, set with the operation (RecipeFields).
  if (!s)
    return {
      name: '',
      platform: '',
      operation: '',
      limit: 0,
      targetsText: '',
      frequency: 'daily',
      timezone: browserZone(),
      wall: tomorrowNine(),
      delivery: 'all',
    };
  return {
    name: s.name,
    platform: s.platform,
    operation: s.operation,
    limit: s.requested_limit,
    targetsText: s.targets.join('\n'),
    frequency: s.frequency,
    timezone: s.timezone,
    wall: wallTime(new Date(s.starts_at), s.timezone),
    delivery: s.delivery,
  };
}

/** The next five runs from POST /v1/schedules/preview, in the schedule's zone and in UTC. */
function Preview({ frequency, timezone, startsAt }: { frequency: Frequency; timezone: string; startsAt: string | null }) {
  const [settled, setSettled] = useState({ frequency, timezone, startsAt });
  useEffect(() => {
    const timer = setTimeout(() => setSettled({ frequency, timezone, startsAt }), 300);
    return () => clearTimeout(timer);
  }, [frequency, timezone, startsAt]);
  const preview = useQuery({
    queryKey: [currentWorkspaceId(), 'schedule-preview', settled],
    enabled: Boolean(settled.startsAt),
    retry: false,
    queryFn: () =>
      unwrap(
        api.POST('/v1/schedules/preview', {
          body: { frequency: settled.frequency, timezone: settled.timezone, starts_at: settled.startsAt!, count: 5 },
        }),
      ),
  });
  return (
    <section aria-labelledby="preview-title" aria-live="polite">
      <h2 id="preview-title">Next runs</h2>
      {preview.error ? (
        <ErrorNotice error={preview.error} title="No preview for this" />
      ) : !preview.data ? (
        <Loading label="Working out the runs" />
      ) : (
        <DataTable
          caption="Next runs"
          testId="schedule-preview"
          data={preview.data.runs}
          columns={[
            {
              header: `In ${settled.timezone}`,
              id: 'local',
              enableSorting: false,
              cell: (c) => inZone(c.row.original.at_utc, settled.timezone),
            },
            { header: 'UTC', id: 'utc', enableSorting: false, cell: (c) => inZone(c.row.original.at_utc, 'UTC') },
          ]}
        />
      )}
    </section>
  );
}

export default function ScheduleEdit() {
  const { scheduleId } = useParams();
  const { role } = useWorkspace();
  const navigate = useWorkspaceNavigate();
  const queryClient = useQueryClient();
  const existing = useQuery({
    queryKey: [currentWorkspaceId(), 'schedule', scheduleId],
    enabled: Boolean(scheduleId),
    queryFn: () => unwrap(api.GET('/v1/schedules/{schedule_id}', { params: { path: { schedule_id: scheduleId! } } })),
  });
  const [draft, setDraft] = useState<Draft | null>(scheduleId ? null : draftOf(undefined));
  useEffect(() => {
    if (scheduleId && existing.data && !draft) setDraft(draftOf(existing.data));
  }, [scheduleId, existing.data, draft]);
  const zones = useMemo(() => timeZones(), []);
  const save = useMutation({
    mutationFn: async (d: Draft) => {
      const body: Schemas['ScheduleCreateRequest'] = {
        name: d.name.trim(),
        platform: d.platform,
        operation: d.operation as Schemas['OperationName'],
        targets: parseTargets(d.targetsText),
        // Left empty: the service applies the operation's default, as the field said.
        ...(d.limit > 0 ? { limit: d.limit } : {}),
        include_posts: 0,
        frequency: d.frequency,
        timezone: d.timezone,
        starts_at: zonedIso(d.wall, d.timezone),
        overlap_policy: 'skip',
        delivery: d.delivery,
      };
      return scheduleId
        ? unwrap(api.PUT('/v1/schedules/{schedule_id}', { params: { path: { schedule_id: scheduleId } }, body }))
        : unwrap(api.POST('/v1/schedules', { body }));
    },
    onSuccess: async (schedule) => {
      await queryClient.invalidateQueries({ queryKey: [currentWorkspaceId(), 'schedules'] });
      queryClient.setQueryData([currentWorkspaceId(), 'schedule', schedule.id], schedule);
      void navigate(`/schedules/${schedule.id}`);
    },
  });
  const title = scheduleId ? 'Edit schedule' : 'New schedule';
  if (!atLeast(role, 'member')) {
    return (
      <div>
        <PageHeader title={title} />
        <p>Your role in this workspace ({role}) can read schedules but not change them.</p>
      </div>
    );
  }
  if (existing.error) return <ErrorNotice error={existing.error} />;
  if (!draft) return <Loading />;
  const targets = parseTargets(draft.targetsText);
  const duplicates = duplicatesOf(targets, draft.platform, draft.operation);
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const startsAt = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(draft.wall) ? zonedIso(draft.wall, draft.timezone) : null;
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(draft);
  };
  return (
    <div>
      <PageHeader title={title} />
      <form onSubmit={onSubmit} className="stack" noValidate>
        <Field label="Name">
          {(id) => <input id={id} required maxLength={120} value={draft.name} onChange={(e) => set({ name: e.target.value })} />}
        </Field>
        <RecipeFields platform={draft.platform} operation={draft.operation} limit={draft.limit} onChange={(r) => set(r)} />
        <Field
          label="Targets, one per line"
          hint={`${targetHint(draft.platform, draft.operation)} One target runs a job each time; several run a batch.`}
          error={
            duplicates.length
              ? `Each target may appear once (compared without case, and a profile link as its username). Duplicated: ${duplicates.join(', ')}.`
              : null
          }
        >
          {(id, describedBy) => (
            <textarea
              id={id}
              rows={4}
              aria-describedby={describedBy}
              value={draft.targetsText}
              onChange={(e) => set({ targetsText: e.target.value })}
            />
          )}
        </Field>
        <div className="row">
          <Field label="Repeats">
            {(id) => (
              <select id={id} value={draft.frequency} onChange={(e) => set({ frequency: e.target.value as Frequency })}>
                {FREQUENCIES.map((f) => (
                  <option key={f.value} value={f.value}>
                    {f.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Time zone" hint="Runs keep this zone's wall-clock time across daylight-saving changes.">
            {(id, describedBy) => (
              <select id={id} aria-describedby={describedBy} value={draft.timezone} onChange={(e) => set({ timezone: e.target.value })}>
                {zones.map((z) => (
                  <option key={z}>{z}</option>
                ))}
              </select>
            )}
          </Field>
          <Field label="First run (in that zone)">
            {(id) => <input id={id} type="datetime-local" required value={draft.wall} onChange={(e) => set({ wall: e.target.value })} />}
          </Field>
        </div>
        <Field
          label="Each run delivers"
          hint="Only new items: each run delivers, and is billed for, what no earlier run of this schedule delivered (list operations)."
        >
          {(id, describedBy) => (
            <select
              id={id}
              aria-describedby={describedBy}
              value={draft.delivery}
              onChange={(e) => set({ delivery: e.target.value as Draft['delivery'] })}
            >
              <option value="all">Everything</option>
              <option value="new_only">Only new items</option>
            </select>
          )}
        </Field>
        <Preview frequency={draft.frequency} timezone={draft.timezone} startsAt={startsAt} />
        <p className="muted small">A schedule reserves nothing now: each run checks and reserves credits when it is due.</p>
        <ErrorNotice error={save.error} />
        <SubmitButton pending={save.isPending} disabled={!draft.name.trim() || targets.length === 0 || duplicates.length > 0 || !startsAt}>
          {scheduleId ? 'Save schedule' : 'Create schedule'}
        </SubmitButton>
      </form>
    </div>
  );
}
