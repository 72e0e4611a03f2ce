import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';
import { parse } from 'yaml';

/**
 * The nearest openapi.yaml above `from`: the repository root, whether this module runs from
 * packages/contract/src (tests, tsx) or from a bundle in dist/ (production image).
 */
export function findOpenApiFile(from: string): string {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'openapi.yaml');
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`openapi.yaml not found in ${from} or any folder above it`);
  }
}

/** Absolute path of openapi.yaml at the repository root. */
export const OPENAPI_PATH: string = findOpenApiFile(__dirname);

export type OpenApiDocument = OpenAPIV3.DocumentV3;

let documentJson: string | undefined;

/**
 * Where the parsed contract is kept for the next process: beside the code, in the node_modules
 * cache of the folder that holds openapi.yaml, so only who can change the code can change what
 * the request validator enforces (not another user of a shared temporary folder).
 */
export const CONTRACT_CACHE_DIR: string = path.join(path.dirname(OPENAPI_PATH), 'node_modules', '.cache', 'sdx-contract');

/**
 * openapi.yaml as JSON text, parsed once per process. Parsing the YAML (over 500 KB) costs about
 * 600 ms of CPU, reading JSON about 10, so the JSON is also kept in CONTRACT_CACHE_DIR under the
 * YAML's digest, for the next process that reads the same contract (every test file, every CLI
 * run). A cache that cannot be read or written is parsed again, never trusted.
 */
function contractJson(): string {
  if (documentJson !== undefined) return documentJson;
  const source = readFileSync(OPENAPI_PATH, 'utf8');
  const digest = createHash('sha256').update(source).digest('hex').slice(0, 32);
  const cached = path.join(CONTRACT_CACHE_DIR, `openapi-${digest}.json`);
  try {
    const text = readFileSync(cached, 'utf8');
    JSON.parse(text);
    documentJson = text;
    return text;
  } catch {
    // Absent or unreadable: parse the YAML.
  }
  const text = JSON.stringify(parse(source));
  documentJson = text;
  try {
    mkdirSync(CONTRACT_CACHE_DIR, { recursive: true });
    const partial = `${cached}.${process.pid}.tmp`;
    writeFileSync(partial, text);
    renameSync(partial, cached);
  } catch {
    // A read-only installation: every process parses the YAML.
  }
  return text;
}

/**
 * Reads and parses openapi.yaml. Each call returns a fresh object, so a consumer that
 * mutates the document (express-openapi-validator does) cannot affect another.
 */
export function loadOpenApiDocument(): OpenApiDocument {
  return JSON.parse(contractJson()) as OpenApiDocument;
}

let documentDigest: string | undefined;

/**
 * The SHA-256 (hex) of openapi.yaml: the key of what is derived from the contract and kept for
 * the next process (the tests' compiled response schemas). Read once per process.
 */
export function contractDigest(): string {
  documentDigest ??= createHash('sha256').update(readFileSync(OPENAPI_PATH, 'utf8')).digest('hex');
  return documentDigest;
}
