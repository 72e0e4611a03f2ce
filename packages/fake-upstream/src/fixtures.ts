/**
 * The known targets of the fake upstream and the sizes of their collections. Anything else is
 * answered with the API's documented not-found behaviour; the private targets with its
 * private/protected behaviour.
 */
export const FIXTURES = {
  youtube: {
    channel: { handle: 'fakechannel', id: 'UCfakechannel0000000000A', title: 'Fake Channel', videos: 230 },
    playlist: { id: 'PLfakeplaylist000000000001', items: 320 },
    privatePlaylist: 'PLprivateplaylist0000000001',
    commentsPerVideo: 150,
    /** A video whose comments are disabled (commentThreads answers 403 commentsDisabled). */
    commentsDisabledVideo: 'fvcd0000001',
    searchResults: 120,
    trendingResults: 200,
    /** An API key the fake rejects (400 keyInvalid). */
    badKey: 'bad-key',
  },
  x: {
    user: { username: 'fakeuser', id: '1456789012345678901', name: 'Fake User', followers: 2600, following: 1200, tweets: 260 },
    protectedUser: { username: 'lockeduser', id: '1456789012345678902' },
    searchResults: 300,
    badToken: 'bad-token',
  },
  tiktok: {
    user: { username: 'fakecreator', videos: 240, hoursBetweenVideos: 36 },
    privateUser: 'privatecreator',
    hashtag: { name: 'fakehashtag', videos: 150, hoursBetweenVideos: 48 },
    keywordVideos: 200,
    commentsPerVideo: 150,
    adResults: 120,
    badSecret: 'bad-secret',
  },
  graph: {
    version: 'v19.0',
    page: { username: 'fakepage', id: '100000000000001', name: 'Fake Page', posts: 240, commentsPerPost: 230 },
    adPageId: '100000000000001',
    pageAds: 250,
    searchAds: 300,
    igUserId: '17841400000000001',
    igBusiness: { username: 'fakebrand', id: '17841400000000002', media: 180 },
    igHashtag: { name: 'fakehashtag', id: '17843853986012965', media: 120 },
    badToken: 'bad-token',
  },
  /** A search query containing this word has no results on every API. */
  emptyQueryWord: 'nothing',
} as const;
