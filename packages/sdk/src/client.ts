import { Core, type ClientOptions } from './core';
import { AccountResource, Platforms, Quotes, UsageResource } from './resources/account';
import { Auth } from './resources/auth';
import { Batches } from './resources/batches';
import { Billing } from './resources/billing';
import { Destinations } from './resources/destinations';
import { Exports } from './resources/exports';
import { Jobs } from './resources/jobs';
import { AuditEvents, Keys } from './resources/keys';
import { Monitors } from './resources/monitors';
import { Schedules } from './resources/schedules';
import { Webhooks } from './resources/webhooks';
import { Workspaces } from './resources/workspaces';

/**
 * The client of the API: one group of methods per resource, each method one operation of
 * openapi.yaml (typed from it), plus the conveniences around them (`jobs.wait`, `jobs.extract`,
 * list iteration, `exports.download`, `webhooks.verify`).
 *
 *     const sdx = new Client({ apiKey: process.env.SDX_API_KEY, baseUrl: 'http://localhost:3000' });
 *     const job = await sdx.jobs.create({ platform: 'twitter', operation: 'followers', target: 'nasa', limit: 2000 });
 *     const done = await sdx.jobs.wait(job.id, { onProgress: (j) => console.log(j.progress_current) });
 */
export class Client {
  readonly platforms: Platforms;
  readonly account: AccountResource;
  readonly usage: UsageResource;
  readonly quotes: Quotes;
  readonly jobs: Jobs;
  readonly batches: Batches;
  readonly schedules: Schedules;
  readonly monitors: Monitors;
  readonly exports: Exports;
  readonly keys: Keys;
  readonly auditEvents: AuditEvents;
  readonly webhooks: Webhooks;
  readonly destinations: Destinations;
  readonly workspaces: Workspaces;
  readonly auth: Auth;
  readonly billing: Billing;
  /** The service's origin the client calls. */
  readonly baseUrl: string;

  constructor(options: ClientOptions = {}) {
    const core = new Core(options);
    this.baseUrl = core.baseUrl;
    this.platforms = new Platforms(core);
    this.account = new AccountResource(core);
    this.usage = new UsageResource(core);
    this.quotes = new Quotes(core);
    this.jobs = new Jobs(core);
    this.batches = new Batches(core);
    this.schedules = new Schedules(core);
    this.monitors = new Monitors(core);
    this.exports = new Exports(core);
    this.keys = new Keys(core);
    this.auditEvents = new AuditEvents(core);
    this.webhooks = new Webhooks(core);
    this.destinations = new Destinations(core);
    this.workspaces = new Workspaces(core);
    this.auth = new Auth(core);
    this.billing = new Billing(core);
  }
}
