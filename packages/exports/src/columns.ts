import type { ItemKind } from '@sdx/catalog';

/** A cell value as written to csv or xlsx; null is an empty cell. */
export type Cell = string | number | boolean | null;

/** Fields every item carries, in column order (ItemBase in @sdx/providers types.ts). */
export const BASE_FIELDS = ['kind', 'platform', 'id', 'username', 'caption', 'url', 'published_at'] as const;

const POST_FIELDS = [
  'title',
  'media_type',
  'duration_seconds',
  'hashtags',
  'collaborator_usernames',
  'metrics.views',
  'metrics.likes',
  'metrics.comments',
  'metrics.shares',
] as const;

/**
 * The one place that lists each kind's own fields, in column order, mirroring the item
 * interfaces of @sdx/providers (types.ts) after the base fields. Nested objects are listed
 * as dotted paths (metrics.views); arrays stay one column and are written as JSON text.
 */
export const KIND_FIELDS: Readonly<Record<ItemKind, readonly string[]>> = {
  profile: ['display_name', 'bio', 'avatar_url', 'verified', 'private', 'followers_count', 'following_count', 'posts_count'],
  post: POST_FIELDS,
  video: POST_FIELDS,
  comment: ['parent_id', 'comment_url', 'likes', 'reply_count'],
  highlight: ['title', 'cover_url', 'items_count'],
  story: ['media_type', 'media_url', 'expires_at'],
  transcript: ['language', 'text', 'segments'],
  playlist: ['title', 'items_count'],
  ad: [
    'advertiser_id',
    'advertiser_name',
    'first_shown_at',
    'last_shown_at',
    'status',
    'body',
    'media_urls',
    'platforms',
    'countries',
    'spend',
    'impressions',
    'reach',
  ],
  advertiser: ['name', 'page_id', 'category', 'ads_count'],
  analytics: ['followers_count', 'posts_count', 'average_likes', 'average_comments', 'engagement_rate', 'posting_frequency_per_week'],
};

/**
 * The trailing column that keeps whatever an item carries beyond the known fields of the
 * export's kinds: a JSON object of those keys (a nested unknown key under a known object
 * appears dotted, e.g. {"metrics.saves": 3}), or empty when there are none. Columns stay
 * fixed before the first row is written, and no data is dropped.
 */
export const EXTRA_COLUMN = 'extra';

/**
 * The item columns of an export over the given kinds: the base fields, then each kind's own
 * fields (union, first-seen order), then `extra`. Stable for a given list of kinds.
 */
export function columnsFor(kinds: readonly ItemKind[]): string[] {
  const seen = new Set<string>(BASE_FIELDS);
  const columns: string[] = [...BASE_FIELDS];
  for (const kind of kinds) {
    for (const field of KIND_FIELDS[kind] ?? []) {
      if (!seen.has(field)) {
        seen.add(field);
        columns.push(field);
      }
    }
  }
  columns.push(EXTRA_COLUMN);
  return columns;
}

type Flattener = (item: unknown) => Cell[];

const flatteners = new WeakMap<readonly string[], Flattener>();

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toCell(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return value.toString();
    default:
      return JSON.stringify(value) ?? null;
  }
}

/**
 * Compiles the column list into a function from item to cells. Columns are known fields
 * (plain or dotted) plus an optional `extra` column; unknown columns give empty cells.
 */
export function compileFlattener(columns: readonly string[]): Flattener {
  interface Plan {
    index: number;
    key: string;
    sub: string | null;
  }
  const plans: Plan[] = [];
  const topLevel = new Set<string>();
  const nested = new Map<string, Set<string>>();
  let extraIndex = -1;
  columns.forEach((column, index) => {
    if (column === EXTRA_COLUMN) {
      extraIndex = index;
      return;
    }
    const dot = column.indexOf('.');
    if (dot < 0) {
      plans.push({ index, key: column, sub: null });
      topLevel.add(column);
    } else {
      const key = column.slice(0, dot);
      const sub = column.slice(dot + 1);
      plans.push({ index, key, sub });
      let subs = nested.get(key);
      if (!subs) nested.set(key, (subs = new Set()));
      subs.add(sub);
    }
  });
  const width = columns.length;

  return (item: unknown): Cell[] => {
    const cells: Cell[] = new Array<Cell>(width).fill(null);
    if (!isPlainObject(item)) return cells;
    for (const plan of plans) {
      const value = item[plan.key];
      if (plan.sub === null) {
        cells[plan.index] = toCell(value);
      } else if (isPlainObject(value)) {
        cells[plan.index] = toCell(value[plan.sub]);
      }
    }
    if (extraIndex >= 0) {
      let extra: Record<string, unknown> | null = null;
      for (const key in item) {
        if (!Object.prototype.hasOwnProperty.call(item, key)) continue;
        const value = item[key];
        if (value === undefined || topLevel.has(key)) continue;
        const subs = nested.get(key);
        if (subs === undefined) {
          (extra ??= {})[key] = value;
        } else if (isPlainObject(value)) {
          for (const sub in value) {
            if (Object.prototype.hasOwnProperty.call(value, sub) && !subs.has(sub) && value[sub] !== undefined) {
              (extra ??= {})[`${key}.${sub}`] = value[sub];
            }
          }
        } else if (value !== null) {
          (extra ??= {})[key] = value;
        }
      }
      cells[extraIndex] = extra === null ? null : JSON.stringify(extra);
    }
    return cells;
  };
}

/**
 * The cells of one item for the given item columns (see columnsFor): scalars as they are,
 * arrays and objects as JSON text, null/undefined as null (an empty cell), and unknown keys
 * in the `extra` column.
 */
export function flattenItem(item: unknown, columns: readonly string[]): Cell[] {
  let flatten = flatteners.get(columns);
  if (!flatten) {
    flatten = compileFlattener(columns);
    flatteners.set(columns, flatten);
  }
  return flatten(item);
}
