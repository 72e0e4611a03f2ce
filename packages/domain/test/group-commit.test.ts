import { GroupCommit, GroupCommitOverloaded } from '@sdx/domain/testing';

/**
 * The batcher itself, without a database: grouping, per-item answers, and the overload bounds
 * that turn a stalled writer into quick refusals instead of an endless queue.
 */

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('GroupCommit', () => {
  it('flushes a lone item at once and groups what arrives while a flush is in flight', async () => {
    const seen: number[][] = [];
    const first = gate();
    const group = new GroupCommit<number, number>(async (items) => {
      seen.push(items);
      if (seen.length === 1) await first.opened;
      return items.map((n) => n * 10);
    });
    const lone = group.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [group.submit(2), group.submit(3), group.submit(4)];
    first.open();
    expect(await lone).toBe(10);
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
    expect(seen).toEqual([[1], [2, 3, 4]]);
  });

  it('answers an Error for one item without failing the others, and a thrown flush for all', async () => {
    const group = new GroupCommit<number, number>((items) => {
      if (items.includes(99)) return Promise.reject(new Error('database unreachable'));
      return Promise.resolve(items.map((n) => (n === 2 ? new Error('refused') : n)));
    });
    const results = await Promise.allSettled([group.submit(1), group.submit(2), group.submit(3)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const all = await Promise.allSettled([group.submit(99), group.submit(5)]);
    expect(all.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'ok'))).toEqual([
      'database unreachable',
      'database unreachable',
    ]);
  });

  it('refuses items that waited past maxWaitMs, and new items past maxQueued, while a flush is stuck', async () => {
    const stuck = gate();
    let flushes = 0;
    const group = new GroupCommit<number, number>(
      async (items) => {
        flushes += 1;
        if (flushes === 1) await stuck.opened;
        return items;
      },
      { maxWaitMs: 100, maxQueued: 3 },
    );
    const inFlight = group.submit(0);
    await new Promise((resolve) => setImmediate(resolve));
    const waiting = [group.submit(1), group.submit(2), group.submit(3)];
    await expect(group.submit(4)).rejects.toBeInstanceOf(GroupCommitOverloaded);
    await new Promise((resolve) => setTimeout(resolve, 150));
    stuck.open();
    expect(await inFlight).toBe(0);
    const settled = await Promise.allSettled(waiting);
    for (const r of settled) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(GroupCommitOverloaded);
    }
    // Once the writer moves again, new work goes through.
    expect(await group.submit(5)).toBe(5);
  });
});
