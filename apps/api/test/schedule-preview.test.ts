import { startTestStack, type TestStack } from '@sdx/testing';

/** POST /v1/schedules/preview: the next occurrences from the scheduler's own recurrence code. */
let stack: TestStack;
let auth: Record<string, string>;
beforeAll(async () => {
  // The clock is fixed so that the occurrences are known: 2027-03-20, before the spring DST change.
  stack = await startTestStack({ clock: { now: () => new Date('2027-03-20T12:00:00Z') } });
  auth = (await stack.workspace()).auth;
});
afterAll(async () => {
  await stack.close();
});

const preview = (body: Record<string, unknown>) => stack.api.post('/v1/schedules/preview', { headers: auth, body });

describe('POST /v1/schedules/preview', () => {
  it('keeps 09:00 Europe/Berlin across the spring DST change, in UTC and local time', async () => {
    const res = await preview({ frequency: 'daily', timezone: 'Europe/Berlin', starts_at: '2027-03-26T09:00:00+01:00', count: 4 });
    expect(res.status).toBe(200);
    expect(res.body.runs).toEqual([
      { at_utc: '2027-03-26T08:00:00.000Z', at_local: '2027-03-26T09:00:00+01:00' },
      { at_utc: '2027-03-27T08:00:00.000Z', at_local: '2027-03-27T09:00:00+01:00' },
      { at_utc: '2027-03-28T07:00:00.000Z', at_local: '2027-03-28T09:00:00+02:00' },
      { at_utc: '2027-03-29T07:00:00.000Z', at_local: '2027-03-29T09:00:00+02:00' },
    ]);
  });

  it('moves a local time that DST skips forward by the gap, and takes the first of an ambiguous one', async () => {
    const gap = await preview({ frequency: 'daily', timezone: 'Europe/Berlin', starts_at: '2027-03-27T02:30:00+01:00', count: 3 });
    expect(gap.body.runs.map((r: { at_local: string }) => r.at_local)).toEqual([
      '2027-03-27T02:30:00+01:00',
      '2027-03-28T03:30:00+02:00',
      '2027-03-29T02:30:00+02:00',
    ]);
    const overlap = await preview({ frequency: 'weekly', timezone: 'Europe/Berlin', starts_at: '2027-10-24T02:30:00+02:00', count: 2 });
    expect(overlap.body.runs).toEqual([
      { at_utc: '2027-10-24T00:30:00.000Z', at_local: '2027-10-24T02:30:00+02:00' },
      { at_utc: '2027-10-31T00:30:00.000Z', at_local: '2027-10-31T02:30:00+02:00' },
    ]);
  });

  it('falls back to the last day of shorter months for a monthly day 31, and shows five runs by default', async () => {
    const res = await preview({ frequency: 'monthly', timezone: 'UTC', starts_at: '2027-03-31T10:00:00Z' });
    expect(res.body.runs.map((r: { at_utc: string }) => r.at_utc)).toEqual([
      '2027-03-31T10:00:00.000Z',
      '2027-04-30T10:00:00.000Z',
      '2027-05-31T10:00:00.000Z',
      '2027-06-30T10:00:00.000Z',
      '2027-07-31T10:00:00.000Z',
    ]);
  });

  it('shows one run for a once recurrence and refuses what a schedule body refuses', async () => {
    expect((await preview({ frequency: 'once', timezone: 'UTC', starts_at: '2027-04-01T00:00:00Z', count: 5 })).body.runs).toHaveLength(1);
    const past = await preview({ frequency: 'once', timezone: 'UTC', starts_at: '2027-01-01T00:00:00Z' });
    expect(past.status).toBe(422);
    expect(past.body.detail[0].loc).toEqual(['body', 'starts_at']);
    const zone = await preview({ frequency: 'daily', timezone: '+02:00', starts_at: '2027-04-01T00:00:00Z' });
    expect(zone.status).toBe(422);
    expect(zone.body.detail[0].loc).toEqual(['body', 'timezone']);
    const offsetless = await preview({ frequency: 'daily', timezone: 'UTC', starts_at: '2027-04-01T00:00:00' });
    expect(offsetless.status).toBe(422);
    for (const count of [0, 21])
      expect((await preview({ frequency: 'daily', timezone: 'UTC', starts_at: '2027-04-01T00:00:00Z', count })).status).toBe(422);
  });
});
