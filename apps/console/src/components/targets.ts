import { CATALOG, normalizeTarget, type Platform, type TargetKind } from '@sdx/catalog';

/** What a target field expects, in words, by the kind of target the operation takes. */
const HINTS: Record<TargetKind, string> = {
  username: 'A username (for example natgeo) or a link to the profile.',
  content: 'A link to the post or video, or its ID or shortcode.',
  query: 'Search words, as you would type them in the app.',
  hashtag: 'A hashtag, with or without # (for example travel).',
  country: 'A two-letter country code (for example US or DE).',
  channel: 'A handle (@name), a channel ID (UC…) or a channel link.',
  page: 'A page handle, its numeric ID or a link to it.',
  highlight: 'A highlight ID or link, taken from a highlights result.',
  playlist: 'A playlist ID or link.',
  ad: 'An ad ID or a link to the ad.',
  advertiser: 'An advertiser page_id, taken from an adlibrary_companies result.',
  comment_url: 'A comment_url taken from a comments result.',
};

function kindOf(platform: string, operation: string): TargetKind | null {
  return CATALOG[platform as Platform]?.find((o) => o.operation === operation)?.target ?? null;
}

export function targetHint(platform: string, operation: string): string {
  const kind = kindOf(platform, operation);
  return kind ? HINTS[kind] : 'The target the operation works on.';
}

/** Why a target would be refused (the same syntax check the service makes), or null. */
export function targetProblem(platform: string, operation: string, target: string): string | null {
  const kind = kindOf(platform, operation);
  if (!kind || target.trim() === '') return null;
  const check = normalizeTarget(platform as Platform, kind, target);
  return check.ok ? null : `This ${check.reason}.`;
}

/** Targets pasted one per line (or separated by commas), trimmed, empty lines dropped. */
export function parseTargets(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((t) => t.trim())
    .filter(Boolean);
}

/** Targets the batch would refuse as duplicates: trimmed and compared case-insensitively, as the service does. */
export function duplicatesOf(targets: string[]): string[] {
  const seen = new Map<string, number>();
  const duplicated: string[] = [];
  for (const target of targets) {
    const key = target.trim().toLowerCase();
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    if (count === 2) duplicated.push(target);
  }
  return duplicated;
}
