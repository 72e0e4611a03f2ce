#!/usr/bin/env node
'use strict';
// `sdx`. In the repository (src/ beside this file) it runs the TypeScript source through tsx, with
// @sdx/sdk resolved to its source by the workspace's tsconfig paths; installed from the package,
// it runs the build in dist/.
const { existsSync } = require('node:fs');
const path = require('node:path');

const source = path.join(__dirname, '..', 'src', 'main.ts');
if (existsSync(source)) {
  process.env.TSX_TSCONFIG_PATH = process.env.TSX_TSCONFIG_PATH || path.join(__dirname, '..', '..', '..', 'tsconfig.json');
  require('tsx/cjs');
  require(source);
} else {
  require('../dist/sdx.cjs');
}
