import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { OpenAPISchemaValidator } from 'express-openapi-validator/dist/framework/openapi.schema.validator';
import { parse } from 'yaml';
import { CONTRACT_CACHE_DIR, OPENAPI_PATH, loadOpenApiDocument } from '../src';

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
    const source = readFileSync(OPENAPI_PATH, 'utf8');
    const digest = createHash('sha256').update(source).digest('hex').slice(0, 32);
    const cached = path.join(CONTRACT_CACHE_DIR, `openapi-${digest}.json`);
    const version = (parse(source) as { info: { version: string } }).info.version;
    // A cache file cut short (the process writing it died) is parsed again and replaced.
    mkdirSync(CONTRACT_CACHE_DIR, { recursive: true });
    writeFileSync(cached, '{"openapi": "3.0');
    const first = versionInChild();
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe(version);
    expect(JSON.parse(readFileSync(cached, 'utf8'))).toEqual(parse(source));
    expect(readdirSync(CONTRACT_CACHE_DIR).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    // A second process reads what the first wrote.
    expect(versionInChild().stdout).toBe(version);
  });

  it('trusts no file of the shared temporary folder: a contract planted there changes nothing', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sdx-contract-'));
    try {
      const source = readFileSync(OPENAPI_PATH, 'utf8');
      const digest = createHash('sha256').update(source).digest('hex').slice(0, 32);
      const planted = JSON.stringify({ openapi: '3.0.3', info: { title: 'planted', version: 'planted' }, paths: {} });
      for (const name of [`sdx-openapi-${digest}.json`, `openapi-${digest}.json`]) writeFileSync(path.join(dir, name), planted);
      const run = versionInChild({ TMPDIR: dir });
      expect(run.stdout).toBe((parse(source) as { info: { version: string } }).info.version);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function versionInChild(env: Record<string, string> = {}) {
  const script = `const { loadOpenApiDocument } = require(${JSON.stringify(require.resolve('../src/document'))});
    process.stdout.write(loadOpenApiDocument().info.version);`;
  return spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { env: { ...process.env, ...env }, encoding: 'utf8' });
}
