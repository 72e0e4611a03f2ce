import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/** The fenced code blocks of a language in a page of docs/, in order, for tests that run a page's examples. */
export function codeBlocks(page: string, language: string): string[] {
  const text = readFileSync(path.join(ROOT, 'docs', page), 'utf8');
  const blocks: string[] = [];
  const fence = /^```([\w-]*)\n([\s\S]*?)^```$/gm;
  for (let match = fence.exec(text); match; match = fence.exec(text)) if (match[1] === language) blocks.push(match[2]);
  return blocks;
}
