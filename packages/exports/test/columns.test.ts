import type { ItemKind } from '@sdx/catalog';
import type { Item } from '@sdx/providers';
import {
  BASE_FIELDS,
  columnsFor,
  EXTRA_COLUMN,
  exportContentType,
  exportFileName,
  flattenItem,
  isExportFormat,
  KIND_FIELDS,
  neutraliseCell,
} from '../src';
import { comment, HOSTILE, post, profile } from './helpers';

const base = { platform: 'youtube' as const, id: 'x1', username: 'u', caption: 'c', url: 'https://y/1', published_at: null };

/** One fully populated item per kind, typed by @sdx/providers so a change there breaks this file. */
const SAMPLES: Item[] = [
  profile(),
  post('p1'),
  { ...post('v1'), kind: 'video', duration_seconds: 12.5, title: 't' },
  comment(),
  { ...base, kind: 'highlight', title: 't', cover_url: 'https://y/c', items_count: 3 },
  { ...base, kind: 'story', media_type: 'video', media_url: 'https://y/m', expires_at: '2024-05-02T00:00:00Z' },
  { ...base, kind: 'transcript', language: 'en', text: 'hi there', segments: [{ start: 0, end: 1.5, text: 'hi there' }] },
  { ...base, kind: 'playlist', title: 'p', items_count: 9 },
  {
    ...base,
    kind: 'ad',
    advertiser_id: 'a1',
    advertiser_name: 'Acme',
    first_shown_at: '2024-01-01',
    last_shown_at: null,
    status: 'active',
    body: 'buy',
    media_urls: ['https://y/a.jpg'],
    platforms: ['facebook', 'instagram'],
    countries: ['US'],
    spend: '<100',
    impressions: '1K-5K',
    reach: '11K',
  },
  { ...base, kind: 'advertiser', name: 'Acme', page_id: '123', category: null, ads_count: 4 },
  {
    ...base,
    kind: 'analytics',
    followers_count: 10,
    posts_count: 2,
    average_likes: 1.5,
    average_comments: 0.5,
    engagement_rate: 0.2,
    posting_frequency_per_week: 3,
  },
];

function topLevelKeys(columns: readonly string[]): string[] {
  return [...new Set(columns.map((c) => c.split('.')[0]))];
}

describe('columns', () => {
  it('mirrors every item shape: each sample has exactly the known fields of its kind', () => {
    const kinds = Object.keys(KIND_FIELDS) as ItemKind[];
    expect(new Set(SAMPLES.map((s) => s.kind))).toEqual(new Set(kinds));
    for (const sample of SAMPLES) {
      const columns = columnsFor([sample.kind]);
      expect(topLevelKeys(columns.slice(0, -1)).sort()).toEqual(Object.keys(sample).sort());
      const cells = flattenItem(sample, columns);
      expect(cells[columns.indexOf(EXTRA_COLUMN)]).toBeNull();
      for (const column of columns.slice(0, -1)) {
        const value = column.split('.').reduce<unknown>((v, key) => (v as Record<string, unknown>)[key], sample);
        expect([column, value]).not.toEqual([column, undefined]);
      }
    }
  });

  it('orders base fields, then kind fields (union, first seen), then extra', () => {
    expect(columnsFor(['post'])).toEqual([
      ...BASE_FIELDS,
      'title',
      'media_type',
      'duration_seconds',
      'hashtags',
      'collaborator_usernames',
      'metrics.views',
      'metrics.likes',
      'metrics.comments',
      'metrics.shares',
      'extra',
    ]);
    const mixed = columnsFor(['profile', 'post', 'video', 'profile']);
    expect(mixed.slice(0, 7)).toEqual([...BASE_FIELDS]);
    expect(mixed.slice(7, 15)).toEqual([...KIND_FIELDS.profile]);
    expect(mixed.slice(15, -1)).toEqual([...KIND_FIELDS.post]);
    expect(mixed.at(-1)).toBe('extra');
    expect(new Set(mixed).size).toBe(mixed.length);
    // highlight's title is already there from post; only its own new fields are added
    expect(columnsFor(['post', 'highlight']).slice(-3)).toEqual(['cover_url', 'items_count', 'extra']);
    expect(columnsFor([])).toEqual([...BASE_FIELDS, 'extra']);
  });

  it('flattens nested objects, writes arrays as JSON, nulls as null', () => {
    const columns = columnsFor(['post']);
    const cells = flattenItem(post('p9', { metrics: { views: 1000, likes: -3, comments: null, shares: 2 } }), columns);
    const byName = Object.fromEntries(columns.map((c, i) => [c, cells[i]]));
    expect(byName).toMatchObject({
      kind: 'post',
      id: 'p9',
      title: null,
      hashtags: '["summer","café"]',
      collaborator_usernames: '[]',
      'metrics.views': 1000,
      'metrics.likes': -3,
      'metrics.comments': null,
      'metrics.shares': 2,
      extra: null,
    });
  });

  it('puts unknown keys in extra, including unknown keys of known nested objects', () => {
    const columns = columnsFor(['post']);
    const item = { ...post('p1'), metrics: { views: 1, likes: 2, comments: 3, shares: 4, saves: 5 }, location: { city: 'Oslo' } };
    const cells = flattenItem(item, columns);
    expect(JSON.parse(cells[columns.length - 1] as string)).toEqual({ 'metrics.saves': 5, location: { city: 'Oslo' } });
    expect(cells.slice(-5, -1)).toEqual([1, 2, 3, 4]);
  });

  it('leaves cells of other kinds empty and tolerates malformed items', () => {
    const columns = columnsFor(['profile', 'post']);
    const cells = flattenItem(profile(), columns);
    expect(cells[columns.indexOf('metrics.likes')]).toBeNull();
    expect(cells[columns.indexOf('followers_count')]).toBe(1500);
    expect(cells[columns.indexOf('verified')]).toBe(true);
    expect(flattenItem(null, columns)).toEqual(columns.map(() => null));
    const odd = flattenItem({ kind: 'post', metrics: 7, title: { a: 1 } }, columnsFor(['post']));
    const postColumns = columnsFor(['post']);
    expect(odd[postColumns.indexOf('metrics.views')]).toBeNull();
    expect(odd[postColumns.indexOf('title')]).toBe('{"a":1}');
    expect(JSON.parse(odd.at(-1) as string)).toEqual({ metrics: 7 });
  });
});

describe('neutraliseCell', () => {
  it('prefixes strings a spreadsheet would evaluate', () => {
    for (const [hostile, safe] of HOSTILE) expect(neutraliseCell(hostile)).toBe(safe);
  });
  it('leaves other values alone', () => {
    expect(neutraliseCell('hello =1')).toBe('hello =1');
    expect(neutraliseCell('')).toBe('');
    expect(neutraliseCell(-2)).toBe(-2);
    expect(neutraliseCell(0)).toBe(0);
    expect(neutraliseCell(true)).toBe(true);
    expect(neutraliseCell(null)).toBeNull();
  });
});

describe('download metadata', () => {
  it('names content types', () => {
    expect(exportContentType('csv')).toBe('text/csv; charset=utf-8');
    expect(exportContentType('json')).toBe('application/json; charset=utf-8');
    expect(exportContentType('xlsx')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(isExportFormat('csv')).toBe(true);
    expect(isExportFormat('xml')).toBe(false);
  });
  it('builds file names from prefixed or bare IDs', () => {
    expect(exportFileName('job', 'job_01ABC', 'csv')).toBe('job_01ABC.csv');
    expect(exportFileName('job', '01ABC', 'xlsx')).toBe('job_01ABC.xlsx');
    expect(exportFileName('batch', 'bat_01XYZ', 'json')).toBe('bat_01XYZ.json');
    expect(exportFileName('job', 'job_1"; x=/../', 'csv')).toBe('job_1___x_____.csv');
  });
});
