import { writeJson } from '../src';
import { Collector, comment, Counter, pagesOf, post, profile } from './helpers';

describe('writeJson', () => {
  it('writes a JSON array that parses back to the same elements', async () => {
    const items = [profile(), post('p1'), post('p2', { caption: '"\u2028\n' }), comment()];
    const out = new Collector();
    expect(await writeJson(pagesOf(items, 3), out)).toBe(4);
    expect(out.writableFinished).toBe(true);
    expect(JSON.parse(out.text())).toEqual(items);
  });

  it('writes batch elements and an empty array', async () => {
    const batch = [{ job_id: 'job_1', target: 'alice', status: 'completed', result_count: 1, result: [profile()] }];
    const out = new Collector();
    await writeJson(pagesOf(batch), out);
    expect(JSON.parse(out.text())).toEqual(batch);

    const empty = new Collector();
    expect(await writeJson(pagesOf([]), empty)).toBe(0);
    expect(empty.text()).toBe('[]');
  });

  it('writes undefined elements as null, like JSON.stringify', async () => {
    const out = new Collector();
    await writeJson(pagesOf([undefined, 1]), out);
    expect(out.text()).toBe(JSON.stringify([undefined, 1]));
  });

  it('waits for drain instead of writing into a full stream', async () => {
    const items = Array.from({ length: 5000 }, (_, i) => post(String(i)));
    const out = new Counter(1024);
    expect(await writeJson(pagesOf(items, 50), out)).toBe(5000);
    expect(out.bytes).toBe(Buffer.byteLength(JSON.stringify(items)));
    expect(out.writesWhileFull).toBe(0);
  });
});
