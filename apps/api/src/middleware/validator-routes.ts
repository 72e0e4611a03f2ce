/**
 * express-openapi-validator (5.6) finds a request's operation by compiling every path of the
 * document with path-to-regexp, in order, on every request, until one matches: with the 76
 * paths of openapi.yaml that was about a tenth of the API's CPU time on `POST /v1/jobs`
 * (issue 51's profile, docs/performance-history.md). The compiled form of a path depends only on
 * the path and the two options the validator passes, so it is compiled once and kept:
 * `pathToRegexp` of the path-to-regexp instance the validator loads answers from a map. The
 * routes are the document's (a fixed, small set); the validator only reads the result (its
 * `regexp`, without the g flag, so no state carries from one exec to the next, and `keys`).
 */
import path from 'node:path';

type Compile = (
  path: string,
  options?: { sensitive?: boolean; strict?: boolean; end?: boolean; trailing?: boolean; delimiter?: string },
) => unknown;

let installed = false;

/** Makes the validator's path-to-regexp remember what it compiled. Idempotent. */
export function rememberValidatorRoutes(): void {
  if (installed) return;
  installed = true;
  const validatorMain = require.resolve('express-openapi-validator');
  // The very module instance the validator's route lookup calls (its own copy, if it has one).
  // The module system's own require (not createRequire): under a test runner with a module
  // registry of its own, that is the instance the validator got too.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const module = require(require.resolve('path-to-regexp', { paths: [path.dirname(validatorMain)] })) as { pathToRegexp: Compile };
  const compile = module.pathToRegexp;
  const compiled = new Map<string, unknown>();
  const remembered: Compile = (path, options) => {
    // Only plain string paths with the validator's options are remembered; anything else is compiled as before.
    if (typeof path !== 'string' || (options && Object.keys(options).some((k) => k !== 'sensitive' && k !== 'strict')))
      return compile(path, options);
    const key = `${options?.sensitive ? 1 : 0}${options?.strict ? 1 : 0}${path}`;
    let found = compiled.get(key);
    if (found === undefined) {
      found = compile(path, options);
      if (compiled.size < 10_000) compiled.set(key, found);
    }
    return found;
  };
  module.pathToRegexp = remembered;
}
