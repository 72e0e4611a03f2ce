export { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions, type RecordedRequest } from './server';
export { FIXTURES } from './fixtures';
export { exampleWire, referenceExamples, repairedText, type ReferenceExample } from './examples';
export { fakeTikTokAdId, fakeTikTokVideoId, TIKTOK_ADS_FIRST_DAY } from './tiktok';
export { isLongTweet, longTweetText } from './x';
export type { FormMode, MisbehaveRule, MisbehaviourKind } from './util';
export {
  reference,
  validate,
  xDialect,
  xOperation,
  xQueryProblems,
  youtubeDialect,
  youtubeMethod,
  youtubeQueryProblems,
  adsArchiveProblems,
  tiktokProblems,
  vendorEndpoint,
  vendorQueryProblems,
  vendorResponseProblems,
  GRAPH_VERSION,
} from './reference';
export { graphFieldNames } from './graph';
