import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { OpenAPISchemaValidator } from 'express-openapi-validator/dist/framework/openapi.schema.validator';
import { parse } from 'yaml';
import { OPENAPI_PATH, loadOpenApiDocument } from '../src';

/**
 * openapi.yaml is read as JSON kept under its digest (document.ts). What is read is the YAML,
 * whatever the cache holds; and the API's validator does not re-check the document on each
 * start (validateApiSpec is off), so the document's validity against OpenAPI 3 is checked here.
 */
describe('the contract document', () => {
  it('is valid OpenAPI 3', () => {
    const validator = new OpenAPISchemaValidator({ version: '3.0.3', validateApiSpec: true });
    expect(validator.validate(loadOpenApiDocument()).errors).toEqual([]);
  });

  it('equals the YAML, and each call returns a copy of its own', () => {
    const yaml = parse(readFileSync(OPENAPI_PATH, 'utf8')) as unknown;
    const a = loadOpenApiDocument();
    expect(a).toEqual(yaml);
    (a.info as { title: string }).title = 'changed';
    expect(loadOpenApiDocument().info.title).not.toBe('changed');
  });

  it('reads the YAML again when the cache is broken, and a second process reads the cache', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sdx-contract-'));
    try {
      const source = readFileSync(OPENAPI_PATH, 'utf8');
      const digest = createHash('sha256').update(source).digest('hex').slice(0, 32);
      // A cache file cut short (the process writing it died) is parsed again and replaced.
      writeFileSync(path.join(dir, `sdx-openapi-${digest}.json`), '{"openapi": "3.0');
      const script = `const { loadOpenApiDocument } = require(${JSON.stringify(require.resolve('../src/document'))});
        process.stdout.write(loadOpenApiDocument().info.version);`;
      const run = () =>
        spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { env: { ...process.env, TMPDIR: dir }, encoding: 'utf8' });
      const first = run();
      expect(first.stderr).toBe('');
      expect(first.stdout).toBe((parse(source) as { info: { version: string } }).info.version);
      const cached = JSON.parse(readFileSync(path.join(dir, `sdx-openapi-${digest}.json`), 'utf8')) as unknown;
      expect(cached).toEqual(parse(source));
      // No partial file left behind (tsx keeps its own cache there too).
      expect(readdirSync(dir).filter((name) => name.startsWith('sdx-'))).toEqual([`sdx-openapi-${digest}.json`]);
      // A second process reads what the first wrote.
      expect(run().stdout).toBe(first.stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
