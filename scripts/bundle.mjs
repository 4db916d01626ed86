#!/usr/bin/env node
// `npm run build`'s second step: dist/ (tsc's output) bundled into dist/bundle/ for bin/maestro.js
// (rolldown.config.mjs says what and why). The folder is made afresh: chunk names carry hashes.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'rolldown';
import config from '../rolldown.config.mjs';

const root = path.resolve(import.meta.dirname, '..');
process.chdir(root);
rmSync(path.join(root, 'dist', 'bundle'), { recursive: true, force: true });
const { output, ...input } = config;
await build({ ...input, output });

// Every package a chunk still imports must be one the package depends on: an installed maestro has
// nothing else (a helper injected by the bundler, say, would fail only at run time).
const { readdirSync, readFileSync } = await import('node:fs');
const { builtinModules } = await import('node:module');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const deps = new Set(Object.keys(pkg.dependencies ?? {}));
const missing = new Set();
const packageOf = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
const IMPORTS = [/(?:^|[\s;])(?:import|export)\b[^'"]*?from\s*["']([^"'./][^"']*)["']/gm, /import\(\s*["']([^"'./][^"']*)["']\s*\)/g];
for (const file of readdirSync(path.join(root, 'dist', 'bundle'))) {
  const code = readFileSync(path.join(root, 'dist', 'bundle', file), 'utf8');
  for (const pattern of IMPORTS) {
    for (const [, spec] of code.matchAll(pattern)) {
      if (spec.startsWith('node:') || builtinModules.includes(spec)) continue;
      if (!deps.has(packageOf(spec))) missing.add(`${file}: ${spec}`);
    }
  }
}
if (missing.size > 0) {
  process.stderr.write(`the bundle imports packages maestro does not depend on:\n  ${[...missing].join('\n  ')}\n`);
  process.exit(1);
}
