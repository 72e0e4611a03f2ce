import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CATALOG, catalogTable, tasksOf } from '@sdx/runtime';

/**
 * The background catalog and its documentation: docs/architecture.md "Background work" lists
 * the catalog's entries, row for row, and the API process runs no task unless the catalog says
 * so and docs/deployment.md "Background work" says why.
 */
const ROOT = path.resolve(__dirname, '../../..');

/** The rows of the first table after `heading` in a Markdown file, header and separator left out. */
function tableAfter(file: string, heading: string): string[][] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`${file} has no "${heading}"`);
  const first = lines.findIndex((line, i) => i > start && line.startsWith('|'));
  const rows: string[][] = [];
  for (let i = first + 2; i < lines.length && lines[i].startsWith('|'); i += 1) {
    rows.push(
      lines[i]
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

function section(file: string, heading: string): string {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${file} has no "${heading}"`);
  const end = text.indexOf('\n## ', start + heading.length + 2);
  return text.slice(start, end < 0 ? undefined : end);
}

it('docs/architecture.md lists every task of the catalog as the catalog declares it', () => {
  const documented = tableAfter('docs/architecture.md', '## Background work');
  expect(documented).toEqual(catalogTable());
  expect(documented.map((row) => row[0])).toEqual(CATALOG.map((task) => `\`${task.name}\``));
});

it('names each task once, each run by some process', () => {
  const names = CATALOG.map((task) => task.name);
  expect(new Set(names).size).toBe(names.length);
  for (const task of CATALOG) expect(task.processes.length).toBeGreaterThan(0);
  expect([...tasksOf('worker'), ...tasksOf('scheduler'), ...tasksOf('api')].map((t) => t.name).sort()).toEqual([...names].sort());
});

it('gives the API a task only where docs/deployment.md "Background work" says why', () => {
  const why = section('docs/deployment.md', '## Background work');
  const api = tasksOf('api');
  const explained =
    api.length === 0 ? why.includes('**api** runs no background task') : api.every((task) => why.includes(`\`${task.name}\``));
  expect(explained).toBe(true);
});

it('runs the mail sender and the auto-recharge charger in the workers', () => {
  expect(tasksOf('worker').map((t) => t.name)).toEqual(expect.arrayContaining(['mail', 'recharge', 'reconcile-jobs', 'job-attempts']));
  expect(tasksOf('scheduler').map((t) => t.name)).toEqual(
    expect.arrayContaining(['schedule-dispatch', 'monitor-runs', 'plan-grace', 'retention']),
  );
});
