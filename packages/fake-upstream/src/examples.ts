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
}

/** Every kept example, each with the file (`<source>.json`) it is kept in. */
export function referenceExamples(): Array<ReferenceExample & { file: string }> {
  return readdirSync(EXAMPLES_DIR)
    .filter((file) => file.endsWith('.json'))
    .flatMap((file) => (JSON.parse(readFileSync(join(EXAMPLES_DIR, file), 'utf8')) as { examples: ReferenceExample[] }).examples.map((e) => ({ ...e, file })));
}
