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

/**
 * Targets the batch would refuse as duplicates, as the service finds them: trimmed, compared
 * case-insensitively, and as the service reads each one (`nasa` and a link to its profile are
 * one target), given the platform and operation. Each duplicate is named as written the second
 * time, with the target it repeats: "https://www.instagram.com/nasa/ (the same as nasa)".
 */
export function duplicatesOf(targets: string[], platform = '', operation = ''): string[] {
  const kind = kindOf(platform, operation);
  const seen = new Map<string, string>();
  const counted = new Set<string>();
  const duplicated: string[] = [];
  for (const target of targets) {
    const check = kind ? normalizeTarget(platform as Platform, kind, target) : null;
    const key = (check?.ok ? check.normalized : target.trim()).toLowerCase();
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, target);
    } else if (!counted.has(key)) {
      counted.add(key);
      duplicated.push(first.trim().toLowerCase() === target.trim().toLowerCase() ? target : `${target} (the same as ${first})`);
    }
  }
  return duplicated;
}
