import { bundlePostsSpec, findOperation, type ItemKind, isPlatform } from '@sdx/catalog';
// The export's own column list: the console's tsconfig maps @sdx/exports to its columns.ts alone
// (browser-safe, no dependency but a type of the catalog), so nothing else of the exports package
// (exceljs) comes along.
import { columnsFor, EXTRA_COLUMN, flattenItem } from '@sdx/exports';
import { formatNumber } from '../format';

/** One result item as GET /v1/jobs/{job_id}/items returns it. */
export type Item = Record<string, unknown>;

export { EXTRA_COLUMN };

/**
 * The item kinds a job of this recipe delivers: its operation's, plus the posts of a profile
 * bundle. The same rule as the exports' (exportItemKinds in packages/domain), so the browser's
 * columns are the csv's.
 */
export function itemKindsOf(platform: string, operation: string, includePosts: number): ItemKind[] {
  const spec = findOperation(platform, operation);
  const kinds: ItemKind[] = spec ? [spec.itemKind] : [];
  if (includePosts > 0 && isPlatform(platform)) {
    const posts = bundlePostsSpec(platform);
    if (posts && !kinds.includes(posts.itemKind)) kinds.push(posts.itemKind);
  }
  return kinds;
}

/** The result's columns: the csv export's item columns, in its order (base fields, each kind's fields, `extra`). */
export function resultColumns(kinds: readonly ItemKind[]): string[] {
  return columnsFor(kinds);
}

/**
 * Columns hidden until the user shows them: those the same for every item of a job (kind,
 * platform), long links to pictures, and the catch-all `extra`. A profile's caption is its bio,
 * and it has no publication date.
 */
const HIDDEN = new Set<string>(['kind', 'platform', 'avatar_url', 'cover_url', 'media_url', EXTRA_COLUMN]);
const HIDDEN_BY_KIND: Partial<Record<ItemKind, readonly string[]>> = {
  profile: ['caption', 'published_at'],
  transcript: ['segments'],
};

/** The columns shown when the user has chosen nothing for this operation. */
export function defaultVisibility(kinds: readonly ItemKind[], columns: readonly string[]): Record<string, boolean> {
  // A field hidden for one kind stays shown when another kind of the job needs it (a bundle's posts have captions).
  const hiddenForAll = (column: string) => kinds.length > 0 && kinds.every((kind) => HIDDEN_BY_KIND[kind]?.includes(column));
  return Object.fromEntries(columns.map((column) => [column, !HIDDEN.has(column) && !hiddenForAll(column)]));
}

/** Where a user's choice of columns is remembered: per platform and operation, in this browser. */
export function visibilityKey(platform: string, operation: string): string {
  return `sdx.results.columns:${platform}/${operation}`;
}

/** The remembered choice, over the defaults; anything unreadable counts as no choice. */
export function loadVisibility(key: string, defaults: Record<string, boolean>): Record<string, boolean> {
  try {
    const stored = JSON.parse(localStorage.getItem(key) ?? '{}') as unknown;
    if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return defaults;
    const chosen = { ...defaults };
    for (const [column, shown] of Object.entries(stored)) if (column in chosen && typeof shown === 'boolean') chosen[column] = shown;
    return chosen;
  } catch {
    return defaults;
  }
}

export function saveVisibility(key: string, visibility: Record<string, boolean>): void {
  try {
    localStorage.setItem(key, JSON.stringify(visibility));
  } catch {
    // Storage full or refused (a private window): the choice lasts for this page only.
  }
}

export function forgetVisibility(key: string): void {
  try {
    localStorage.removeItem(key);
  } catch {
    // As above.
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The value of a column in an item: a field, a dotted field of a nested object (metrics.views),
 * or for `extra` what the item carries beyond the columns, as the export computes it.
 */
export function valueAt(item: Item, column: string, columns: readonly string[]): unknown {
  if (column === EXTRA_COLUMN) {
    const cell = flattenItem(item, columns)[columns.indexOf(EXTRA_COLUMN)];
    return typeof cell === 'string' ? (JSON.parse(cell) as unknown) : null;
  }
  const dot = column.indexOf('.');
  if (dot < 0) return item[column];
  const parent = item[column.slice(0, dot)];
  return isPlainObject(parent) ? parent[column.slice(dot + 1)] : undefined;
}

/** A value as plain text, as the table shows it (what the filter matches): no JSON. */
export function textOf(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.map(textOf).join(', ');
  if (isPlainObject(value))
    return Object.entries(value)
      .map(([key, v]) => `${key}: ${textOf(v)}`)
      .join(', ');
  // JSON has no other kind of value.
  return '';
}

export { isPlainObject };
