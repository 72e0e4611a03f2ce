/**
 * What packages/runtime takes from the domain to build a process's services:
 * `@sdx/domain/runtime`. A name it starts to use is added here, from the module that declares it.
 */

export { GroupAdmissions } from '../admission/admit';
export { RechargeCharger } from '../billing/recharge';
export { type Services } from '../context';
export { MailSender } from '../delivery/mail-sender';
export { GroupJobCompletions } from '../jobs/complete';
export { BucketResultObjects } from '../jobs/result-objects';
export { GroupJobClaims } from '../jobs/state';
export { type Resources } from '../resources';
export { sealerOf } from '../sealing';
export { SourceHealthGate, sourceHealthSamples } from '../sources/health';
export { type Clock, systemClock } from '../time';
export { GroupDeliveryAttempts } from '../webhooks/deliver';
export { LocalSignal } from '../webhooks/outbox-signal';
export { GroupKeyLookups } from '../workspaces/key-lookup';
