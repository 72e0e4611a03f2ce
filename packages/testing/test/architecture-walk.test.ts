import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * docs/architecture.md "The walk of a job" stays true to the code: every function it names with
 * its file (`name` (`path`)) is declared in that file, and its stated count of calls between
 * files is the number of its numbered lines. Paths are under packages/domain/src/ unless they
 * start with apps/ or packages/ (the page's own convention).
 */
const ROOT = path.resolve(__dirname, '../../..');
const DOC = path.join(ROOT, 'docs/architecture.md');
const DOMAIN = 'packages/domain/src';

interface Walk {
  /** The numbered lines, each with its continuation lines joined. */
  lines: Array<{ number: number; text: string }>;
  /** The "Count: N calls between files" the page states. */
  count: number | null;
  /** The whole section, prose included. */
  section: string;
}

function walkOf(markdown: string): Walk {
  const start = markdown.indexOf('## The walk of a job');
  if (start < 0) throw new Error('docs/architecture.md has no "The walk of a job" section');
  const rest = markdown.slice(start + 1);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  const lines: Walk['lines'] = [];
  for (const line of section.split('\n')) {
    const numbered = /^(\d+)\.\s+(.*)$/.exec(line);
    if (numbered) lines.push({ number: Number(numbered[1]), text: numbered[2] });
    else if (lines.length > 0 && /^\s{2,}\S/.test(line)) lines[lines.length - 1].text += ` ${line.trim()}`;
  }
  const count = /\*\*Count: (\d+) calls between files\*\*/.exec(section);
  return { lines, count: count ? Number(count[1]) : null, section };
}

/** Each `name` (`path.ts`) pair of a text, its path resolved from the repository's root. */
function pairsOf(text: string): Array<{ name: string; file: string }> {
  return [...text.matchAll(/`([A-Za-z_$][\w$.]*)` \(`([\w./-]+\.ts)`/g)].map((m) => {
    const written = m[2];
    const file = written.startsWith('apps/') || written.startsWith('packages/') ? written : `${DOMAIN}/${written}`;
    return { name: m[1], file };
  });
}

const escape = (s: string) => s.replace(/[$]/g, '\\$');

/** Whether `source` declares `name`: a function, class, interface, type, const, or a method or member signature. */
function declares(source: string, name: string): boolean {
  const n = escape(name);
  return [
    new RegExp(`\\b(?:function\\*?|class|interface|type|enum)\\s+${n}\\b`),
    new RegExp(`\\b(?:const|let)\\s+${n}\\s*[=:]`),
    new RegExp(`^\\s*(?:(?:public|private|protected|static|async|readonly|override|abstract)\\s+)*\\*?${n}\\??\\s*(?:<[^>\\n]*>)?\\(`, 'm'),
  ].some((re) => re.test(source));
}

/** What is wrong with a walk: names not declared where it says, and a count that is not its numbered lines. */
function problemsOf(walk: Walk, read: (file: string) => string | null): string[] {
  const problems: string[] = [];
  walk.lines.forEach((line, i) => {
    if (line.number !== i + 1) problems.push(`line ${line.number} is numbered out of order (expected ${i + 1})`);
  });
  if (walk.count === null) problems.push('no "**Count: N calls between files**"');
  else if (walk.count !== walk.lines.length)
    problems.push(`the count says ${walk.count} calls, but the walk has ${walk.lines.length} numbered lines`);
  for (const { name, file } of pairsOf(walk.section)) {
    const source = read(file);
    if (source === null) {
      problems.push(`${name}: ${file} does not exist`);
      continue;
    }
    // A dotted name (Class.method) names a class or interface and its member: each must be declared there.
    for (const part of name.split('.')) {
      if (!declares(source, part)) problems.push(`${name}: ${part} is not declared in ${file}`);
    }
  }
  return problems;
}

const readRepoFile = (file: string): string | null => {
  const full = path.join(ROOT, file);
  return existsSync(full) ? readFileSync(full, 'utf8') : null;
};

describe('docs/architecture.md, the walk of a job', () => {
  const walk = walkOf(readFileSync(DOC, 'utf8'));

  it('names each function in the file that declares it, and counts its numbered lines', () => {
    expect(walk.lines.length).toBeGreaterThan(20);
    const numbered = walk.lines.flatMap((line) => pairsOf(line.text));
    // Every numbered line names at least the function it calls, with its file or by a name given before.
    expect(numbered.length).toBeGreaterThanOrEqual(walk.lines.length - 5);
    expect(problemsOf(walk, readRepoFile)).toEqual([]);
  });

  it('names the calls this release added to the path', () => {
    const names = new Set(walk.lines.flatMap((line) => pairsOf(line.text).map((p) => p.name)));
    for (const name of [
      'submissionDelivery',
      'watchesBalance',
      'extractRecorded',
      'enqueueAfterCommit',
      'bookSettlements',
      'announceEnded',
    ]) {
      expect(names.has(name)).toBe(true);
    }
  });

  it('the check fails on a name its file does not declare, a missing file and a wrong count', () => {
    const broken = walkOf(
      [
        '## The walk of a job',
        '**Count: 3 calls between files**',
        '1. `createJob` → `resolveRecipe` (`jobs/recipe.ts`).',
        '2. `createJob` → `pageBody` (`jobs/run-job.ts`).',
        '   `ExtractionQueues.enqueueEverything` (`packages/queue/src/queues.ts`).',
        '3. `x` → `y` (`jobs/no-such-file.ts`).',
        '5. `x` → `createJob` (`apps/api/src/routes/createJob.ts`).',
        '## Next',
      ].join('\n'),
    );
    expect(problemsOf(broken, readRepoFile)).toEqual([
      'line 5 is numbered out of order (expected 4)',
      'the count says 3 calls, but the walk has 4 numbered lines',
      `pageBody: pageBody is not declared in ${DOMAIN}/jobs/run-job.ts`,
      'ExtractionQueues.enqueueEverything: enqueueEverything is not declared in packages/queue/src/queues.ts',
      `y: ${DOMAIN}/jobs/no-such-file.ts does not exist`,
    ]);
  });
});
