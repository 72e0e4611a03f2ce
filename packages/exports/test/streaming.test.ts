import { columnsFor, type ExportRow, writeCsv, writeJson, writeXlsx } from '../src';
import { Counter, generatedPosts } from './helpers';

const ITEMS = 25_000;
const MB = 1024 * 1024;

/** Runs `work` while sampling RSS every 10 ms; returns its result and the peak growth. */
async function withPeakRss<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, growth: peak - before };
  } finally {
    clearInterval(timer);
  }
}

/** Passes pages through and records how many bytes `out` had received when the last page was read. */
async function* watched(source: AsyncIterable<ExportRow[]>, out: Counter, seen: { bytesAtEnd: number }): AsyncGenerator<ExportRow[]> {
  for await (const page of source) yield page;
  seen.bytesAtEnd = out.bytes;
}

async function* itemsOnly(source: AsyncIterable<ExportRow[]>): AsyncGenerator<unknown[]> {
  for await (const page of source) yield page.map((row) => row.item);
}

describe('streaming 25,000 items to a counting Writable', () => {
  const options = { contextColumns: ['batch_id'], itemKinds: ['post' as const] };

  it('xlsx: counts every row, compresses as it goes and keeps RSS growth under 100 MB', async () => {
    const out = new Counter();
    const seen = { bytesAtEnd: 0 };
    const { result, growth } = await withPeakRss(() => writeXlsx(watched(generatedPosts(ITEMS), out, seen), out, options));
    expect(result).toBe(ITEMS);
    expect(out.bytes).toBeGreaterThan(500 * 1024);
    // most of the file reached the output while rows were still being read: no backlog
    expect(seen.bytesAtEnd).toBeGreaterThan(out.bytes * 0.8);
    expect(growth).toBeLessThan(100 * MB);
  });

  it('csv: counts every row, writes every byte, respects backpressure', async () => {
    const out = new Counter();
    const { result, growth } = await withPeakRss(() => writeCsv(generatedPosts(ITEMS), out, options));
    expect(result).toBe(ITEMS);
    expect(out.bytes).toBeGreaterThan(ITEMS * 150);
    expect(out.bytes).toBeGreaterThan(columnsFor(['post']).join(',').length);
    expect(out.writesWhileFull).toBe(0);
    expect(growth).toBeLessThan(100 * MB);
  });

  it('json: counts every element and respects backpressure', async () => {
    const out = new Counter();
    const { result, growth } = await withPeakRss(() => writeJson(itemsOnly(generatedPosts(ITEMS)), out));
    expect(result).toBe(ITEMS);
    expect(out.bytes).toBeGreaterThan(ITEMS * 300);
    expect(out.writesWhileFull).toBe(0);
    expect(growth).toBeLessThan(100 * MB);
  });
});
