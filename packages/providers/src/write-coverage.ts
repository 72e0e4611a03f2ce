/**
 * Rewrites the generated sections of docs/providers.md (coverage table, error tables) from the
 * provider registry: npx tsx packages/providers/src/write-coverage.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withGeneratedSections } from './coverage';

const file = join(__dirname, '..', '..', '..', 'docs', 'providers.md');
writeFileSync(file, withGeneratedSections(readFileSync(file, 'utf8')));
process.stdout.write(`updated ${file}\n`);
