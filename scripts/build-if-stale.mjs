#!/usr/bin/env node
// `npm test` needs dist/ (the end-to-end tests start bin/maestro.js). `npm ci` has just built it
// (`prepare`), so building again would compile twice: build only when a source file is newer
// than the last build, or when there is none.
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
if (built >= newest) {
  process.stdout.write('dist/ is up to date with src/: not building again\n');
} else {
  const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  // tsc leaves its build info untouched when nothing changed: mark the build as current all the same.
  if (tsc.status === 0) utimesSync(path.join(root, 'dist', '.tsbuildinfo'), new Date(), new Date());
  process.exit(tsc.status ?? 1);
}
