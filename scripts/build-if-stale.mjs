#!/usr/bin/env node
// `npm test` needs dist/ (the end-to-end tests start bin/maestro.js). `npm ci` has just built it
// (`prepare`), so building again would compile twice: build only when a source file is newer
// than the last build, or when there is none (or the bundle bin/maestro.js loads is missing).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const built = (() => {
  try {
    return statSync(path.join(root, 'dist', '.tsbuildinfo')).mtimeMs;
  } catch {
    return -1;
  }
})();
const inputs = [path.join(root, 'package.json'), path.join(root, 'tsconfig.json'), path.join(root, 'tsconfig.build.json')];
for (const entry of readdirSync(path.join(root, 'src'), { withFileTypes: true, recursive: true })) {
  if (entry.isFile()) inputs.push(path.join(entry.parentPath, entry.name));
}
const newest = Math.max(...inputs.map((f) => statSync(f).mtimeMs));
const bundled = (() => {
  try {
    return statSync(path.join(root, 'dist', 'bundle', 'main.js')).mtimeMs >= 0;
  } catch {
    return false;
  }
})();
if (built >= newest && bundled) {
  process.stdout.write('dist/ is up to date with src/: not building again\n');
} else {
  const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  // bin/maestro.js loads the bundle of dist/ (scripts/bundle.mjs).
  const bundle = spawnSync(process.execPath, [path.join(root, 'scripts', 'bundle.mjs')], { cwd: root, stdio: 'inherit' });
  if (bundle.status !== 0) process.exit(bundle.status ?? 1);
  // tsc leaves its build info untouched when nothing changed: mark the build as current all the same.
  utimesSync(path.join(root, 'dist', '.tsbuildinfo'), new Date(), new Date());
}
