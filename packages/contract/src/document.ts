import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';
import { parse } from 'yaml';

/** Absolute path of openapi.yaml at the repository root. */
export const OPENAPI_PATH: string = path.resolve(__dirname, '..', '..', '..', 'openapi.yaml');

export type OpenApiDocument = OpenAPIV3.DocumentV3;

/**
 * Reads and parses openapi.yaml. Each call returns a fresh object, so a consumer that
 * mutates the document (express-openapi-validator does) cannot affect another.
 */
export function loadOpenApiDocument(): OpenApiDocument {
  return parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDocument;
}
