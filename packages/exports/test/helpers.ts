import { Writable } from 'stream';
import type { ExportRow } from '../src';
import type { CommentItem, PostItem, ProfileItem } from '@sdx/providers';

/** A Writable that keeps what it receives, for reading an export back. */
export class Collector extends Writable {
  readonly chunks: Buffer[] = [];
  constructor(highWaterMark = 16 * 1024) {
    super({ highWaterMark });
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(chunk);
    setImmediate(callback);
  }
  buffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
  text(): string {
    return this.buffer().toString('utf8');
  }
}

/**
 * A Writable that only counts bytes, answers asynchronously and records writes made while
 * its buffer was full (a writer ignoring backpressure would make some).
 */
export class Counter extends Writable {
  bytes = 0;
  writesWhileFull = 0;
  constructor(highWaterMark = 16 * 1024) {
    super({ highWaterMark });
  }
  override write(chunk: unknown, ...rest: unknown[]): boolean {
    if (this.writableNeedDrain) this.writesWhileFull += 1;
    return (super.write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.bytes += chunk.length;
    setImmediate(callback);
  }
}

// eslint-disable-next-line @typescript-eslint/require-await -- the writers read an async source; these pages are in memory
export async function* pagesOf<T>(list: readonly T[], size = 2): AsyncGenerator<T[]> {
  for (let i = 0; i < list.length; i += size) yield list.slice(i, i + size);
}

export function post(id: string, overrides: Partial<PostItem> = {}): PostItem {
  return {
    kind: 'post',
    platform: 'instagram',
    id,
    username: 'alice',
    caption: `caption ${id}, with "quotes"\nand a second line`,
    url: `https://www.instagram.com/p/${id}/`,
    published_at: '2024-05-01T10:00:00.000Z',
    title: null,
    media_type: 'image',
    duration_seconds: null,
    hashtags: ['summer', 'café'],
    collaborator_usernames: [],
    metrics: { views: null, likes: 120, comments: 7, shares: 0 },
    ...overrides,
  };
}

export function profile(overrides: Partial<ProfileItem> = {}): ProfileItem {
  return {
    kind: 'profile',
    platform: 'instagram',
    id: '17841400000000001',
    username: 'alice',
    caption: null,
    url: 'https://www.instagram.com/alice/',
    published_at: null,
    display_name: 'Alice',
    bio: 'hello',
    avatar_url: null,
    verified: true,
    private: false,
    followers_count: 1500,
    following_count: 20,
    posts_count: 42,
    ...overrides,
  };
}

export function comment(overrides: Partial<CommentItem> = {}): CommentItem {
  return {
    kind: 'comment',
    platform: 'instagram',
    id: 'c1',
    username: 'bob',
    caption: 'nice',
    url: null,
    published_at: '2024-05-02T10:00:00.000Z',
    parent_id: 'p1',
    comment_url: null,
    likes: 3,
    reply_count: 0,
    ...overrides,
  };
}

/** A lazy source of `count` post rows in pages, generated as they are read. */
// eslint-disable-next-line @typescript-eslint/require-await -- the writers read an async source; these pages are made in memory
export async function* generatedPosts(count: number, pageSize = 250): AsyncGenerator<ExportRow[]> {
  for (let start = 0; start < count; start += pageSize) {
    const page: ExportRow[] = [];
    for (let i = start; i < Math.min(count, start + pageSize); i++) {
      page.push({
        item: post(String(i), {
          caption: `post number ${i} about summer travel and coffee #summer #travel #coffee`,
          hashtags: ['summer', 'travel', 'coffee'],
          metrics: { views: i * 10, likes: i, comments: i % 50, shares: null },
        }),
      });
    }
    yield page;
  }
}

/** Hostile strings that a spreadsheet would evaluate, with their neutralised form. */
export const HOSTILE: ReadonlyArray<[string, string]> = [
  ['=HYPERLINK("http://x","y")', `'=HYPERLINK("http://x","y")`],
  ['+1', `'+1`],
  ['-2', `'-2`],
  ['@SUM(A1)', `'@SUM(A1)`],
  ['\tx', `'\tx`],
  ['\rx', `'\rx`],
];
