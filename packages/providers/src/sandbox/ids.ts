import type { Platform } from '@sdx/catalog';
import { type Rng, uniqueChars, uniqueDigits } from './random';
import { FIRST_NAMES, HANDLE_WORDS, LAST_NAMES } from './words';

/**
 * Identifiers in each network's own style. List items pass their index so the IDs of one
 * result never collide (the index is encoded, scrambled, in the ID's tail).
 */

/** Account ID: instagram numeric pk, tiktok 19 digits, youtube UC channel ID, x numeric, facebook page ID. */
export function userId(platform: Platform, rng: Rng, index: number): string {
  switch (platform) {
    case 'instagram':
      return `${rng.int(1, 9)}${rng.digits(rng.int(3, 4))}${uniqueDigits(index, rng.salt)}`;
    case 'tiktok':
      return `${rng.pick(['6', '7'])}${rng.digits(12)}${uniqueDigits(index, rng.salt)}`;
    case 'youtube':
      return `UC${rng.base64url(18)}${uniqueChars(index, rng.salt)}`;
    case 'twitter':
      return rng.chance(0.5)
        ? `${rng.int(1, 9)}${rng.digits(rng.int(2, 4))}${uniqueDigits(index, rng.salt)}`
        : `1${rng.pick(['4', '5', '6', '7', '8'])}${rng.digits(11)}${uniqueDigits(index, rng.salt)}`;
    case 'facebook':
      return `10006${rng.digits(4)}${uniqueDigits(index, rng.salt)}`;
  }
}

/** Content ID: instagram shortcode, tiktok 19-digit video ID, youtube 11-char video ID, tweet ID, facebook post ID. */
export function contentId(platform: Platform, rng: Rng, index: number): string {
  switch (platform) {
    case 'instagram':
      return `${rng.pick(['C', 'D'])}${rng.base64url(6)}${uniqueChars(index, rng.salt)}`;
    case 'tiktok':
      return `7${rng.pick(['2', '3', '4', '5'])}${rng.digits(11)}${uniqueDigits(index, rng.salt)}`;
    case 'youtube':
      return `${rng.base64url(7)}${uniqueChars(index, rng.salt)}`;
    case 'twitter':
      return `1${rng.pick(['8', '9'])}${rng.digits(11)}${uniqueDigits(index, rng.salt)}`;
    case 'facebook':
      return `${rng.int(1, 9)}${rng.digits(9)}${uniqueDigits(index, rng.salt)}`;
  }
}

/** Comment ID in the network's style. */
export function commentId(platform: Platform, rng: Rng, index: number): string {
  switch (platform) {
    case 'instagram':
      return `17${rng.int(8, 9)}${rng.digits(8)}${uniqueDigits(index, rng.salt)}`;
    case 'tiktok':
      return `7${rng.pick(['3', '4'])}${rng.digits(11)}${uniqueDigits(index, rng.salt)}`;
    case 'youtube':
      return `Ug${rng.pick(['w', 'x', 'y', 'z'])}${rng.base64url(13)}${uniqueChars(index, rng.salt)}4AaABAg`;
    case 'twitter':
      return contentId(platform, rng, index);
    case 'facebook':
      return `${rng.int(1, 9)}${rng.digits(9)}${uniqueDigits(index, rng.salt)}`;
  }
}

/** Instagram story or highlight media ID (numeric). */
export function mediaId(rng: Rng, index: number): string {
  return `3${rng.digits(12)}${uniqueDigits(index, rng.salt)}`;
}

/** Ad library ID: facebook ad archive ID, tiktok ad ID. */
export function adId(platform: Platform, rng: Rng, index: number): string {
  return platform === 'tiktok'
    ? `18${rng.digits(11)}${uniqueDigits(index, rng.salt)}`
    : `${rng.int(1, 9)}${rng.digits(rng.int(8, 9))}${uniqueDigits(index, rng.salt)}`;
}

/** youtube playlist ID (PL + 32 characters). */
export function playlistId(rng: Rng): string {
  return `PL${rng.base64url(32)}`;
}

/**
 * A person with a handle valid on the network (x: no dots, at most 15 characters; facebook: no
 * underscores). With `uniqueIndex`, the handle ends in a number that differs for every index
 * below 100000, so the handles of one list never repeat (the words carry no digits).
 */
export function person(platform: Platform, rng: Rng, uniqueIndex?: number): { username: string; displayName: string } {
  const first = rng.pick(FIRST_NAMES);
  const second = rng.chance(0.6) ? rng.pick(LAST_NAMES) : rng.pick(HANDLE_WORDS);
  const seps = platform === 'twitter' ? ['_', ''] : platform === 'facebook' ? ['.', ''] : ['_', '.', ''];
  const sep = rng.pick(seps);
  const number =
    uniqueIndex !== undefined
      ? String((uniqueIndex * 38917 + (rng.salt % 100_000)) % 100_000)
      : rng.chance(0.45)
        ? String(rng.int(1, 999))
        : '';
  const stem = `${first}${sep}${second}`;
  return {
    username: platform === 'twitter' ? stem.slice(0, 15 - number.length) + number : stem + number,
    displayName: `${capitalize(first)} ${capitalize(second)}`,
  };
}

export function capitalize(word: string): string {
  return word.length === 0 ? word : word[0].toUpperCase() + word.slice(1);
}

/** A display name that fits a handle made by `username`. */
export function displayNameFor(handle: string): string {
  const words = handle
    .replace(/[0-9]+$/, '')
    .split(/[._-]+/)
    .filter(Boolean);
  return words.length > 0 ? words.map(capitalize).join(' ') : handle;
}
