import { existsSync, readFileSync } from 'node:fs';
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

/**
 * Reads and parses openapi.yaml. Each call returns a fresh object, so a consumer that
 * mutates the document (express-openapi-validator does) cannot affect another.
 */
export function loadOpenApiDocument(): OpenApiDocument {
  return parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDocument;
}
