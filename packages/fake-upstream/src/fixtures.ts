/**
 * The known targets of the fake upstream and the sizes of their collections. Anything else is
 * answered with the API's documented not-found behaviour; the private targets with its
 * private/protected behaviour.
 */
export const FIXTURES = {
  youtube: {
    channel: { handle: 'fakechannel', id: 'UCfakechannel0000000000A', title: 'Fake Channel', videos: 230, shorts: 75 },
    playlist: { id: 'PLfakeplaylist000000000001', items: 320 },
    privatePlaylist: 'PLprivateplaylist0000000001',
    commentsPerVideo: 150,
    /** A video whose comments are disabled (commentThreads answers 403 commentsDisabled). */
    commentsDisabledVideo: 'fvcd0000001',
    searchResults: 120,
    trendingResults: 200,
    /** An API key the fake rejects (400 badRequest, details reason API_KEY_INVALID). */
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
    version: 'v26.0',
    page: { username: 'fakepage', id: '100000000000001', name: 'Fake Page', posts: 240, commentsPerPost: 230, repliesPerComment: 40 },
    adPageId: '100000000000001',
    pageAds: 250,
    searchAds: 300,
    igUserId: '17841400000000001',
    igBusiness: { username: 'fakebrand', id: '17841400000000002', media: 180 },
    igHashtag: { name: 'fakehashtag', id: '17843853986012965', media: 120 },
    badToken: 'bad-token',
  },
  scrapecreators: {
    // id: the shortcode read as a base-64 number, as Instagram's media IDs are.
    igPost: { shortcode: 'DFakePost01', id: '3556315263810067765' },
    igUser: { handle: 'fakebrand', id: '17841400000000002' },
    comments: 140,
    highlights: 6,
    highlightId: '18067016518767501',
    highlightItems: 12,
    tagged: 130,
    searchProfiles: 90,
    tiktokUsers: 75,
    trending: 40,
    ytChannel: { handle: 'fakechannel', id: 'UCfakechannel0000000000A' },
    ytShorts: 120,
    /** A video the vendor has no transcript for. */
    ytNoTranscript: 'fvnotrans01',
    fbPage: 'fakepage',
    fbReels: 110,
    companies: 8,
    adId: '702369045530001',
    badKey: 'bad-key',
  },
  /** A search query containing this word has no results on every API. */
  emptyQueryWord: 'nothing',
} as const;
