/**
 * Monthly plans (extensions-3.md 2): PLANS, a JSON list of `{id, name, monthly_credits, amount,
 * currency, limits?: {rate_limit_per_minute?, max_active_jobs?}}` (amount in the currency's minor
 * unit, per month). `free` is always a plan: a list without it gets it added, with
 * NEW_WORKSPACE_CREDITS credits and amount 0. Every other plan costs something (amount > 0).
 */
export interface PlanLimits {
  rate_limit_per_minute?: number;
  max_active_jobs?: number;
}

export interface Plan {
  id: string;
  name: string;
  monthly_credits: number;
  /** Per month, in the currency's minor unit; 0 only for `free`. */
  amount: number;
  /** Lower case ISO 4217. */
  currency: string;
  limits: PlanLimits;
}

export const FREE_PLAN_ID = 'free';

export function defaultPlans(newWorkspaceCredits: number): Plan[] {
  return [
    freePlan(newWorkspaceCredits),
    { id: 'starter', name: 'Starter', monthly_credits: 50_000, amount: 4_900, currency: 'usd', limits: {} },
    { id: 'pro', name: 'Pro', monthly_credits: 300_000, amount: 19_900, currency: 'usd', limits: {} },
  ];
}

function freePlan(newWorkspaceCredits: number, currency = 'usd'): Plan {
  return { id: FREE_PLAN_ID, name: 'Free', monthly_credits: newWorkspaceCredits, amount: 0, currency, limits: {} };
}

const SHAPE = '{id, name, monthly_credits, amount, currency, limits?: {rate_limit_per_minute?, max_active_jobs?}}';

const positive = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;
const nonNegative = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function parseLimits(raw: unknown, i: number): PlanLimits {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new Error(`PLANS[${i}].limits must be {rate_limit_per_minute?, max_active_jobs?}`);
  const limits: PlanLimits = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (key !== 'rate_limit_per_minute' && key !== 'max_active_jobs') throw new Error(`PLANS[${i}].limits has an unknown limit ${key}`);
    if (!positive(value)) throw new Error(`PLANS[${i}].limits.${key} must be a positive integer`);
    limits[key] = value;
  }
  return limits;
}

/** PLANS: the plans on sale, each checked, `free` first (added when missing); the default list when unset. */
export function parsePlans(raw: string | undefined, newWorkspaceCredits: number): Plan[] {
  if (raw === undefined || raw.trim() === '') return defaultPlans(newWorkspaceCredits);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(`PLANS must be a JSON list of ${SHAPE}`);
  }
  if (!Array.isArray(parsed)) throw new Error(`PLANS must be a JSON list of ${SHAPE}`);
  const seen = new Set<string>();
  const plans = parsed.map((entry: unknown, i): Plan => {
    const p = entry as Record<string, unknown> | null;
    if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new Error(`PLANS[${i}] must be ${SHAPE}`);
    const id = p.id;
    const free = id === FREE_PLAN_ID;
    const ok =
      typeof id === 'string' &&
      /^[A-Za-z0-9_-]{1,64}$/.test(id) &&
      typeof p.name === 'string' &&
      p.name.trim() !== '' &&
      p.name.length <= 100 &&
      nonNegative(p.monthly_credits) &&
      (free ? nonNegative(p.amount) : positive(p.amount)) &&
      typeof p.currency === 'string' &&
      /^[a-zA-Z]{3}$/.test(p.currency);
    if (!ok)
      throw new Error(
        `PLANS[${i}] must be ${SHAPE} (id of letters, digits, _ or -; amount > 0 in the minor unit except for free; currency of 3 letters)`,
      );
    if (free && p.amount !== 0) throw new Error('PLANS: the free plan costs nothing (amount 0)');
    if (seen.has(id)) throw new Error(`PLANS lists ${id} twice`);
    seen.add(id);
    return {
      id,
      name: (p.name as string).trim(),
      monthly_credits: p.monthly_credits as number,
      amount: p.amount as number,
      currency: (p.currency as string).toLowerCase(),
      limits: parseLimits(p.limits, i),
    };
  });
  const free = plans.find((p) => p.id === FREE_PLAN_ID);
  const rest = plans.filter((p) => p.id !== FREE_PLAN_ID);
  return [free ?? freePlan(newWorkspaceCredits, rest[0]?.currency), ...rest];
}
