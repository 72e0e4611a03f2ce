import fc from 'fast-check';
import Papa from 'papaparse';
import { type Cell, columnsFor, encodeCsvRecord, type ExportRow, writeCsv } from '../src';
import { Collector, comment, Counter, HOSTILE, pagesOf, post, profile } from './helpers';

function parse(text: string): string[][] {
  const parsed = Papa.parse<string[]>(text, { newline: '\r\n', skipEmptyLines: false });
  expect(parsed.errors).toEqual([]);
  // every record ends with CRLF, so the parser sees one empty trailing line
  expect(parsed.data.at(-1)).toEqual(['']);
  return parsed.data.slice(0, -1);
}

describe('writeCsv', () => {
  it('round-trips a job export: header, rows, dotted columns, arrays as JSON, nulls empty', async () => {
    const rows: ExportRow[] = [
      { item: post('p1') },
      { item: post('p2', { caption: null, hashtags: [], metrics: { views: 10, likes: -4, comments: null, shares: 1 } }) },
      { item: post('p3', { title: 'Über, "quoted"' }) },
    ];
    const out = new Collector();
    const count = await writeCsv(pagesOf(rows), out, { contextColumns: [], itemKinds: ['post'] });
    expect(count).toBe(3);
    expect(out.writableFinished).toBe(true);

    const text = out.text();
    expect(text.charCodeAt(0)).not.toBe(0xfeff);
    expect(text.replace(/\r\n/g, '').includes('\n')).toBe(true); // the caption's own newline, quoted
    const [header, ...data] = parse(text);
    expect(header).toEqual(columnsFor(['post']));
    expect(data).toHaveLength(3);
    const records = data.map((cells) => Object.fromEntries(header.map((h, i) => [h, cells[i]])));
    expect(records[0]).toMatchObject({
      kind: 'post',
      platform: 'instagram',
      id: 'p1',
      caption: 'caption p1, with "quotes"\nand a second line',
      title: '',
      hashtags: '["summer","café"]',
      'metrics.views': '',
      'metrics.likes': '120',
      'metrics.shares': '0',
      extra: '',
    });
    expect(JSON.parse(records[0].hashtags)).toEqual(['summer', 'café']);
    expect(records[1]).toMatchObject({ caption: '', hashtags: '[]', 'metrics.likes': '-4', 'metrics.comments': '' });
    expect(records[2].title).toBe('Über, "quoted"');
  });

  it('leads batch exports with the context columns', async () => {
    const rows: ExportRow[] = [
      { context: { batch_id: 'bat_1', job_id: 'job_1', target: 'alice' }, item: profile() },
      { context: { batch_id: 'bat_1', job_id: 'job_2', target: 'bob' }, item: profile({ username: 'bob', verified: false }) },
      { context: { batch_id: 'bat_1', job_id: 'job_3', target: null }, item: comment() },
    ];
    const out = new Collector();
    await writeCsv(pagesOf(rows, 1), out, { contextColumns: ['batch_id', 'job_id', 'target'], itemKinds: ['profile', 'comment'] });
    const [header, ...data] = parse(out.text());
    expect(header).toEqual(['batch_id', 'job_id', 'target', ...columnsFor(['profile', 'comment'])]);
    expect(data.map((r) => r.slice(0, 4))).toEqual([
      ['bat_1', 'job_1', 'alice', 'profile'],
      ['bat_1', 'job_2', 'bob', 'profile'],
      ['bat_1', 'job_3', '', 'comment'],
    ]);
    expect(data[1][header.indexOf('verified')]).toBe('false');
    expect(data[2][header.indexOf('parent_id')]).toBe('p1');
    expect(data[2][header.indexOf('followers_count')]).toBe('');
  });

  it('neutralises formula-like strings but not negative numbers', async () => {
    const rows: ExportRow[] = HOSTILE.map(([caption], i) => ({
      context: { target: caption },
      item: post(`h${i}`, { caption, metrics: { views: -2, likes: null, comments: null, shares: null } }),
    }));
    const out = new Collector();
    await writeCsv(pagesOf(rows), out, { contextColumns: ['target'], itemKinds: ['post'] });
    const [header, ...data] = parse(out.text());
    const caption = header.indexOf('caption');
    expect(data.map((r) => r[caption])).toEqual(HOSTILE.map(([, safe]) => safe));
    expect(data.map((r) => r[0])).toEqual(HOSTILE.map(([, safe]) => safe));
    expect(data.map((r) => r[header.indexOf('metrics.views')])).toEqual(HOSTILE.map(() => '-2'));
  });

  it('writes only a header for an empty source', async () => {
    const out = new Collector();
    expect(await writeCsv(pagesOf([]), out, { contextColumns: [], itemKinds: ['comment'] })).toBe(0);
    expect(out.text()).toBe(
      `${columnsFor(['comment'])
        .map((c) => `"${c}"`)
        .join(',')}\r\n`,
    );
  });

  it('encloses every text field in double quotes, the header too, and leaves numbers, booleans and nulls bare', async () => {
    const rows: ExportRow[] = [{ context: { target: 'alice' }, item: profile({ username: 'bob', verified: false, followers_count: 12 }) }];
    const out = new Collector();
    await writeCsv(pagesOf(rows), out, { contextColumns: ['target'], itemKinds: ['profile'] });
    const [headerLine, dataLine] = out.text().split('\r\n');
    const header = columnsFor(['profile']);
    expect(headerLine).toBe(['target', ...header].map((c) => `"${c}"`).join(','));
    const fields = dataLine.split(',');
    expect(fields[0]).toBe('"alice"');
    expect(fields[1 + header.indexOf('kind')]).toBe('"profile"');
    expect(fields[1 + header.indexOf('username')]).toBe('"bob"');
    expect(fields[1 + header.indexOf('verified')]).toBe('false');
    expect(fields[1 + header.indexOf('followers_count')]).toBe('12');
    expect(encodeCsvRecord(['', null, 0, true, 'a"b'])).toBe('"",,0,true,"a""b"');
  });

  it('keeps a formula after a `;` inside its quoted field, for readers that split on `;`', async () => {
    const hostile = 'harmless;=HYPERLINK("http://x","y")';
    const rows: ExportRow[] = [{ context: { target: hostile }, item: post('s1', { caption: 'a;@SUM(A1);+1' }) }];
    const out = new Collector();
    await writeCsv(pagesOf(rows), out, { contextColumns: ['target'], itemKinds: ['post'] });
    const [, dataLine] = out.text().split('\r\n');
    // A reader that splits on `;` (as spreadsheets of many locales do) outside double quotes:
    // every `;` sits inside a quoted field, so no cell it makes begins with a formula character.
    const cells: string[] = [''];
    let quoted = false;
    for (const ch of dataLine) {
      if (ch === '"') quoted = !quoted;
      else if (ch === ';' && !quoted) cells.push('');
      else cells[cells.length - 1] += ch;
    }
    expect(cells).toHaveLength(1);
    expect(cells.every((cell) => !/^[=+\-@\t\r]/.test(cell))).toBe(true);
    // Without the quotes (the encoding before), the same reader would start cells with `=` and `@`.
    const bare = dataLine.replace(/"/g, '').split(';');
    expect(bare.some((cell) => /^[=@+]/.test(cell))).toBe(true);
    // The comma reader gets the fields back exactly.
    const [fields] = Papa.parse<string[]>(dataLine).data;
    expect(fields[0]).toBe(hostile);
    expect(fields[1 + columnsFor(['post']).indexOf('caption')]).toBe('a;@SUM(A1);+1');
  });

  it('encodes records exactly as papaparse unparse does with every string quoted', () => {
    const cell = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.string({ unit: fc.constantFrom('a', ' ', ',', '"', '\r', '\n', '\ufeff', 'é', "'") }),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.array(cell, { minLength: 1, maxLength: 8 }), (cells: Cell[]) => {
        expect(encodeCsvRecord(cells)).toBe(
          Papa.unparse([cells], { newline: '\r\n', quotes: (value: unknown) => typeof value === 'string' }),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('waits for drain instead of writing into a full stream', async () => {
    const rows: ExportRow[] = Array.from({ length: 5000 }, (_, i) => ({ item: post(String(i)) }));
    const out = new Counter(1024);
    expect(await writeCsv(pagesOf(rows, 100), out, { contextColumns: [], itemKinds: ['post'] })).toBe(5000);
    expect(out.bytes).toBeGreaterThan(5000 * 100);
    expect(out.writesWhileFull).toBe(0);
  });

  it('rejects when the source fails or the output closes early', async () => {
    // eslint-disable-next-line @typescript-eslint/require-await -- a source that fails after its first page, read as the writers read one
    async function* failing(): AsyncGenerator<ExportRow[]> {
      yield [{ item: post('1') }];
      throw new Error('page load failed');
    }
    await expect(writeCsv(failing(), new Collector(), { contextColumns: [], itemKinds: ['post'] })).rejects.toThrow('page load failed');

    const out = new Counter(1024);
    const rows: ExportRow[] = Array.from({ length: 20_000 }, (_, i) => ({ item: post(String(i)) }));
    const done = writeCsv(pagesOf(rows, 100), out, { contextColumns: [], itemKinds: ['post'] });
    setImmediate(() => out.destroy());
    await expect(done).rejects.toThrow();
  });
});
