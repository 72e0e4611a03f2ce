import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the platforms' published example replies are kept (written by write-examples.ts and by hand). */
export const EXAMPLES_DIR = join(__dirname, '..', 'references', 'examples');

/** One published example reply (or documented error reply) of an endpoint, with the page it comes from. */
export interface ReferenceExample {
  id: string;
  page: string;
  endpoint: string;
  status: number;
  body: unknown;
  note?: string;
  /** For an error reply: the error code the adapter must make of it. */
  expect_error?: string;
  /** When the page was read (YYYY-MM-DD). */
  read?: string;
  /** Where the verbatim copy of the page was found. */
  copy?: string;
  /** The page's example reply byte for byte, as text (it is not always JSON as published). */
  published?: string;
  /** The only edits that make `published` JSON: [published text, replacement] pairs, in order. */
  repairs?: Array<[string, string]>;
}

/** The published text with its repairs applied (each must occur exactly once), or null when none is kept. */
export function repairedText(e: Pick<ReferenceExample, 'published' | 'repairs'>): string | null {
  if (e.published === undefined) return null;
  let text = e.published;
  for (const [from, to] of e.repairs ?? []) {
    if (text.split(from).length !== 2) throw new Error(`repair ${JSON.stringify(from)} does not occur exactly once`);
    text = text.replace(from, () => to);
  }
  return text;
}

/** What the fake sends for an example: the repaired published text itself (64-bit IDs keep their digits), else its body. */
export function exampleWire(e: ReferenceExample): unknown {
  return repairedText(e) ?? e.body;
}

/** Every kept example, each with the file (`<source>.json`) it is kept in. */
export function referenceExamples(): Array<ReferenceExample & { file: string }> {
  return readdirSync(EXAMPLES_DIR)
    .filter((file) => file.endsWith('.json'))
    .flatMap((file) =>
      (JSON.parse(readFileSync(join(EXAMPLES_DIR, file), 'utf8')) as { examples: ReferenceExample[] }).examples.map((e) => ({
        ...e,
        file,
      })),
    );
}
