import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { useWorkspaceNavigate } from '../paths';
import { WorkspaceLink } from '../components/workspace-link';
import { api, currentWorkspaceId, type Schemas, unwrap } from '../api/client';
import { duplicatesOf, parseTargets, targetHint, targetProblem } from '../components/targets';
import { ErrorNotice, Field, formatNumber, PageHeader, SubmitButton } from '../components/ui';
import { plural } from '../format';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';
import { usePlatforms } from './jobs';

type Operation = Schemas['OperationName'];

/** Waits until `value` has not changed for `ms`, so a quote is asked once typing pauses. */
function useSettled<T>(value: T, ms = 350): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/**
 * Platform and operation pickers from GET /v1/platforms, with the price of the chosen operation
 * and its results per target: the operation's own default (`default_limit`, what the service
 * applies when a request names no limit) until changed, at most its `max_results`. Choosing
 * another operation puts its default back. A limit of 0 is "not chosen yet".
 */
export function RecipeFields(props: {
  platform: string;
  operation: string;
  limit: number;
  onChange: (next: { platform: string; operation: string; limit: number }) => void;
}) {
  const platforms = usePlatforms();
  const platform = platforms.data?.find((p) => p.platform === props.platform);
  const operation = platform?.operations.find((o) => o.operation === props.operation);
  useEffect(() => {
    if (platforms.data && !platform) {
      const first = platforms.data[0].operations[0];
      props.onChange({ platform: platforms.data[0].platform, operation: first.operation, limit: first.default_limit });
    } else if (platform && !operation) {
      const first = platform.operations[0];
      props.onChange({ platform: props.platform, operation: first.operation, limit: first.default_limit });
    }
  });
  if (platforms.error) return <ErrorNotice error={platforms.error} />;
  const price = operation
    ? operation.base_credits > 0
      ? `${plural(operation.base_credits, 'credit', 'credits')} flat when anything is delivered`
      : `${plural(operation.credits_per_result, 'credit', 'credits')} per ${operation.results_per_credit > 1 ? plural(operation.results_per_credit, 'result', 'results') : 'result'}`
    : '';
  return (
    <div className="row">
      <Field label="Platform">
        {(id) => (
          <select
            id={id}
            value={props.platform}
            onChange={(e) => props.onChange({ platform: e.target.value, operation: '', limit: props.limit })}
          >
            {platforms.data?.map((p) => (
              <option key={p.platform} value={p.platform}>
                {p.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Operation" hint={price}>
        {(id, describedBy) => (
          <select
            id={id}
            aria-describedby={describedBy}
            value={props.operation}
            onChange={(e) => {
              const chosen = platform?.operations.find((o) => o.operation === e.target.value);
              props.onChange({ platform: props.platform, operation: e.target.value, limit: chosen?.default_limit ?? 0 });
            }}
          >
            {platform?.operations.map((o) => (
              <option key={o.operation} value={o.operation}>
                {o.operation.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="Results per target"
        hint={
          operation ? (
            <span data-testid="limit-hint">{`Default ${formatNumber(operation.default_limit)}; at most ${formatNumber(operation.max_results)}.`}</span>
          ) : undefined
        }
        error={limitProblem(props.limit, operation?.max_results)}
      >
        {(id, describedBy) => (
          <input
            id={id}
            type="number"
            inputMode="numeric"
            min={1}
            max={operation?.max_results ?? 25000}
            aria-describedby={describedBy}
            aria-invalid={Boolean(limitProblem(props.limit, operation?.max_results))}
            value={props.limit || ''}
            onChange={(e) => props.onChange({ platform: props.platform, operation: props.operation, limit: Number(e.target.value) })}
          />
        )}
      </Field>
    </div>
  );
}

/**
 * What is wrong with a results-per-target value, in the form's own words, before anything is
 * sent (the service would refuse it with its own field name): null when it is fine or not
 * entered yet.
 */
export function limitProblem(limit: number, max: number | undefined): string | null {
  if (!limit) return null;
  if (!Number.isInteger(limit) || limit < 1) return 'Enter a whole number of results, at least 1.';
  if (max !== undefined && limit > max)
    return `At most ${formatNumber(max)} results per target for this operation; you entered ${formatNumber(limit)}.`;
  return null;
}

function Quote({ body }: { body: Schemas['QuoteRequest'] | null }) {
  const settled = useSettled(body);
  const quote = useQuery({
    queryKey: [currentWorkspaceId(), 'quote', settled],
    enabled: settled !== null,
    queryFn: () => unwrap(api.POST('/v1/quotes', { body: settled! })),
    retry: false,
    staleTime: 0,
  });
  if (!body) return <p className="muted">Fill in the form to see what it would cost.</p>;
  if (quote.error) return <ErrorNotice error={quote.error} title="No quote for this" />;
  const q = quote.data;
  if (!q)
    return (
      <p className="muted" role="status">
        Pricing…
      </p>
    );
  return (
    <div className={q.affordable ? 'quote' : 'quote quote-bad'} role="status" data-testid="quote">
      <p>
        Reserves at most <strong>{plural(q.max_credits, 'credit', 'credits')}</strong> now for {plural(q.target_count, 'target', 'targets')}{' '}
        × {plural(q.requested_limit, 'result', 'results')}; you pay only for what is delivered.
        {q.cached_targets > 0 && ` ${plural(q.cached_targets, 'target is', 'targets are')} served from the cache at no cost.`}
      </p>
      <p className="small">
        {plural(q.available_credits, 'credit', 'credits')} available · {formatNumber(q.active_jobs)} of{' '}
        {plural(q.max_active_jobs, 'active job', 'active jobs')}
      </p>
      {!q.affordable && <p className="small">This would be refused now: not enough credits, or too many active jobs.</p>}
    </div>
  );
}

export default function NewWork({ mode }: { mode: 'job' | 'batch' }) {
  const { role } = useWorkspace();
  const navigate = useWorkspaceNavigate();
  // The limit is the chosen operation's default once GET /v1/platforms has answered (RecipeFields).
  const [recipe, setRecipe] = useState({ platform: '', operation: '', limit: 0 });
  const [target, setTarget] = useState('');
  const [targetsText, setTargetsText] = useState('');
  const targets = useMemo(() => parseTargets(targetsText), [targetsText]);
  const duplicates = useMemo(() => duplicatesOf(targets, recipe.platform, recipe.operation), [targets, recipe.platform, recipe.operation]);
  const invalid = useMemo(
    () =>
      mode === 'batch'
        ? targets.map((t) => ({ t, problem: targetProblem(recipe.platform, recipe.operation, t) })).filter((x) => x.problem)
        : [],
    [mode, targets, recipe.platform, recipe.operation],
  );
  const single = mode === 'job' ? targetProblem(recipe.platform, recipe.operation, target) : null;
  const base = { platform: recipe.platform, operation: recipe.operation as Operation, limit: recipe.limit, include_posts: 0 };
  const platforms = usePlatforms();
  const maxResults = platforms.data
    ?.find((p) => p.platform === recipe.platform)
    ?.operations.find((o) => o.operation === recipe.operation)?.max_results;
  const ready =
    recipe.operation !== '' &&
    recipe.limit >= 1 &&
    !limitProblem(recipe.limit, maxResults) &&
    (mode === 'job' ? target.trim() !== '' && !single : targets.length > 0 && duplicates.length === 0 && targets.length <= 100);
  const quoteBody = ready ? (mode === 'job' ? { ...base, target: target.trim() } : { ...base, targets }) : null;
  const submit = useMutation({
    mutationFn: async () =>
      mode === 'job'
        ? { path: `/jobs/${(await unwrap(api.POST('/v1/jobs', { body: { ...base, target: target.trim() } }))).id}` }
        : { path: `/batches/${(await unwrap(api.POST('/v1/batches', { body: { ...base, targets } }))).id}` },
    onSuccess: ({ path }) => navigate(path),
  });
  if (!atLeast(role, 'member')) {
    return (
      <div>
        <PageHeader title={mode === 'job' ? 'New job' : 'New batch'} />
        <p>Your role in this workspace ({role}) can read its work but not start any.</p>
      </div>
    );
  }
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (ready) submit.mutate();
  };
  return (
    <div>
      <PageHeader title={mode === 'job' ? 'New job' : 'New batch'}>
        <WorkspaceLink className="button" to={mode === 'job' ? '/batches/new' : '/jobs/new'}>
          {mode === 'job' ? 'Several targets? New batch' : 'One target? New job'}
        </WorkspaceLink>
      </PageHeader>
      <form onSubmit={onSubmit} className="stack" noValidate>
        <RecipeFields {...recipe} onChange={setRecipe} />
        {mode === 'job' ? (
          <Field label="Target" hint={targetHint(recipe.platform, recipe.operation)} error={single}>
            {(id, describedBy) => (
              <input
                id={id}
                aria-describedby={describedBy}
                aria-invalid={Boolean(single)}
                value={target}
                onChange={(e) => setTarget(e.target.value)}
                autoComplete="off"
              />
            )}
          </Field>
        ) : (
          <Field
            label="Targets, one per line"
            hint={
              <>
                {`${targetHint(recipe.platform, recipe.operation)} Up to 100; paste a column from a spreadsheet. ${plural(targets.length, 'target', 'targets')}.`}{' '}
                <span data-testid="batch-reextracts">
                  A batch extracts every target afresh and bills it, even one a single job would get free from a recent result: for those,
                  start single jobs.
                </span>
              </>
            }
            error={
              duplicates.length > 0
                ? `Each target may appear once (compared without case, and a profile link as its username). Duplicated: ${duplicates.join(', ')}.`
                : targets.length > 100
                  ? `At most 100 targets; this list has ${targets.length}.`
                  : invalid.length > 0
                    ? `Not valid: ${invalid.map((x) => `${x.t} (${x.problem})`).join('; ')}`
                    : null
            }
          >
            {(id, describedBy) => (
              <textarea
                id={id}
                rows={8}
                aria-describedby={describedBy}
                aria-invalid={duplicates.length > 0}
                value={targetsText}
                onChange={(e) => setTargetsText(e.target.value)}
              />
            )}
          </Field>
        )}
        <section aria-label="Quote">
          <Quote body={quoteBody} />
        </section>
        <ErrorNotice error={submit.error} />
        <SubmitButton pending={submit.isPending} disabled={!ready}>
          {mode === 'job' ? 'Start job' : `Start batch of ${targets.length}`}
        </SubmitButton>
      </form>
    </div>
  );
}
