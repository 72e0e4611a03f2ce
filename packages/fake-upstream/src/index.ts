export { startFakeUpstream, type FakeUpstream, type RecordedRequest } from './server';
export { FIXTURES } from './fixtures';
export { fakeTikTokAdId, fakeTikTokVideoId } from './tiktok';
export type { MisbehaveRule, MisbehaviourKind } from './util';
