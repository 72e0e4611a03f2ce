import ExcelJS from 'exceljs';
import { columnsFor, type ExportRow, writeXlsx, XLSX_SHEET_NAME } from '../src';
import { Collector, comment, Counter, HOSTILE, pagesOf, post, profile } from './helpers';

async function readBack(buffer: Buffer): Promise<{ header: unknown[]; rows: unknown[][]; sheet: ExcelJS.Worksheet }> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(buffer as unknown as ArrayBuffer);
  expect(workbook.worksheets).toHaveLength(1);
  const sheet = workbook.getWorksheet(XLSX_SHEET_NAME)!;
  const width = sheet.getRow(1).cellCount;
  const values = (n: number): unknown[] => Array.from({ length: width }, (_, i) => sheet.getRow(n).getCell(i + 1).value);
  const rows: unknown[][] = [];
  for (let n = 2; n <= sheet.rowCount; n++) rows.push(values(n));
  return { header: values(1), rows, sheet };
}

describe('writeXlsx', () => {
  it('writes a header and one typed row per item', async () => {
    const rows: ExportRow[] = [
      { item: post('p1') },
      { item: post('p2', { caption: null, metrics: { views: 5, likes: -4, comments: null, shares: null } }) },
    ];
    const out = new Collector();
    expect(await writeXlsx(pagesOf(rows), out, { contextColumns: [], itemKinds: ['post'] })).toBe(2);
    expect(out.writableFinished).toBe(true);
    expect(out.buffer().subarray(0, 2).toString()).toBe('PK');

    const { header, rows: data } = await readBack(out.buffer());
    const columns = columnsFor(['post']);
    expect(header).toEqual(columns);
    expect(data).toHaveLength(2);
    const first = Object.fromEntries(columns.map((c, i) => [c, data[0][i]]));
    expect(first).toMatchObject({
      kind: 'post',
      id: 'p1',
      caption: 'caption p1, with "quotes"\nand a second line',
      title: null,
      hashtags: '["summer","café"]',
      'metrics.views': null,
      'metrics.likes': 120,
      'metrics.shares': 0,
      extra: null,
    });
    const second = Object.fromEntries(columns.map((c, i) => [c, data[1][i]]));
    expect(second).toMatchObject({ caption: null, 'metrics.views': 5, 'metrics.likes': -4 });
  });

  it('leads batch exports with context columns across kinds', async () => {
    const rows: ExportRow[] = [
      { context: { batch_id: 'bat_1', job_id: 'job_1', target: 'alice' }, item: profile() },
      { context: { batch_id: 'bat_1', job_id: 'job_2', target: 'p1' }, item: comment() },
    ];
    const out = new Collector();
    await writeXlsx(pagesOf(rows, 1), out, { contextColumns: ['batch_id', 'job_id', 'target'], itemKinds: ['profile', 'comment'] });
    const { header, rows: data } = await readBack(out.buffer());
    expect(header).toEqual(['batch_id', 'job_id', 'target', ...columnsFor(['profile', 'comment'])]);
    expect(data.map((r) => r.slice(0, 4))).toEqual([
      ['bat_1', 'job_1', 'alice', 'profile'],
      ['bat_1', 'job_2', 'p1', 'comment'],
    ]);
    expect(data[0][header.indexOf('verified')]).toBe(true);
    expect(data[0][header.indexOf('followers_count')]).toBe(1500);
    expect(data[1][header.indexOf('likes')]).toBe(3);
  });

  it('neutralises formula-like strings; no cell becomes a formula', async () => {
    const rows: ExportRow[] = HOSTILE.map(([caption], i) => ({
      context: { target: caption },
      item: post(`h${i}`, { caption, metrics: { views: -2, likes: null, comments: null, shares: null } }),
    }));
    const out = new Collector();
    await writeXlsx(pagesOf(rows), out, { contextColumns: ['target'], itemKinds: ['post'] });
    const { header, rows: data, sheet } = await readBack(out.buffer());
    const caption = header.indexOf('caption');
    // XML parsing turns a literal CR into LF, so '\rx' reads back as '\nx' (still quoted)
    const expected = HOSTILE.map(([, safe]) => safe.replace(/\r/g, '\n'));
    expect(data.map((r) => r[caption])).toEqual(expected);
    expect(data.map((r) => r[0])).toEqual(expected);
    expect(data.map((r) => r[header.indexOf('metrics.views')])).toEqual(HOSTILE.map(() => -2));
    sheet.eachRow((row) =>
      row.eachCell((cell) => {
        expect(cell.type).not.toBe(ExcelJS.ValueType.Formula);
      }),
    );
  });

  it('rejects when the output closes early instead of waiting forever', async () => {
    const rows: ExportRow[] = Array.from({ length: 20_000 }, (_, i) => ({ item: post(String(i)) }));
    const out = new Counter(1024);
    const done = writeXlsx(pagesOf(rows, 100), out, { contextColumns: [], itemKinds: ['post'] });
    setTimeout(() => out.destroy(), 20);
    await expect(done).rejects.toThrow('closed');
  });
});
