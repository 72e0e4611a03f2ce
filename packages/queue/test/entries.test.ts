import { ENTRY_MAX_JOBS, entryId, jobIdsOf, planEntries } from '@sdx/queue';

/** How the attempts of jobs admitted together are packed into queue entries. */
describe('planEntries', () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `job_${String(i).padStart(3, '0')}`);

  it('gives a lone job its own entry, named as every single attempt is', () => {
    expect(planEntries(['job_a'], 1)).toEqual([{ id: entryId({ jobId: 'job_a', attempt: 1 }), jobIds: ['job_a'] }]);
    expect(entryId({ jobId: 'job_a', attempt: 3 })).toBe('job_a-a3');
  });

  it('packs jobs in order into entries of at most ENTRY_MAX_JOBS, named after their first job and size', () => {
    const all = ids(2 * ENTRY_MAX_JOBS + 1);
    const plans = planEntries(all, 1);
    expect(plans.map((p) => p.id)).toEqual([
      `job_000-a1+${ENTRY_MAX_JOBS - 1}`,
      `job_${String(ENTRY_MAX_JOBS).padStart(3, '0')}-a1+${ENTRY_MAX_JOBS - 1}`,
      `job_${String(2 * ENTRY_MAX_JOBS).padStart(3, '0')}-a1`,
    ]);
    expect(plans.flatMap((p) => p.jobIds)).toEqual(all);
    expect(plans.map((p) => p.jobIds.length)).toEqual([ENTRY_MAX_JOBS, ENTRY_MAX_JOBS, 1]);
    // Deterministic: the same jobs give the same entries.
    expect(planEntries(all, 1)).toEqual(plans);
  });

  it('reads the jobs of an entry of either shape', () => {
    expect(jobIdsOf({ jobId: 'job_a', attempt: 2 })).toEqual(['job_a']);
    expect(jobIdsOf({ jobId: 'job_a', attempt: 1, jobIds: ['job_a', 'job_b'] })).toEqual(['job_a', 'job_b']);
  });
});
