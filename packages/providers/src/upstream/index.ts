export { createYouTubeProvider, YOUTUBE_DEFAULT_BASE_URL, type YouTubeConfig } from './youtube';
export { createXProvider, X_DEFAULT_BASE_URL, type XConfig } from './x';
export { createTikTokProvider, TIKTOK_ADS_EARLIEST, TIKTOK_DEFAULT_BASE_URL, type TikTokConfig } from './tiktok';
export {
  createMetaAdLibraryProvider,
  createFacebookPagesProvider,
  createInstagramProvider,
  type MetaAdLibraryConfig,
  type InstagramConfig,
} from './meta';
export { GRAPH_DEFAULT_BASE_URL, GRAPH_VERSION, GRAPH_ERRORS, type GraphConfig } from './graph';
export type { HttpSettings } from './http';
export type { UpstreamProvider } from './provider';
export { parseJsonExact } from './json';
export {
  createScrapeCreatorsProvider,
  instagramMediaId,
  SCRAPECREATORS_DEFAULT_BASE_URL,
  type ScrapeCreatorsConfig,
} from './scrapecreators';
export { rows as errorRows, type ErrorRow } from './classify';
