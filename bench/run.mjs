#!/usr/bin/env node
// `npm run bench`: runs every bench/*.bench.mjs (or the ones named on the command line) against the
// built CLI, and each one rewrites its own section of BENCHMARKS.md with the machine and the command.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = (await readdir(here))
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
if (files.length === 0) {
  console.error(`no benchmark matches ${wanted.join(' ')}`);
  process.exit(2);
}
for (const file of files) {
  console.log(`\n== ${file}`);
  const mod = await import(pathToFileURL(path.join(here, file)).href);
  await mod.default();
}
