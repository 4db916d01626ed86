// The CLI as `bin/maestro.js` loads it: the compiled `dist/` (tsc's output, which the tests and the
// benches also use) bundled into a few chunks in `dist/bundle/`, the lazily loaded parts (a subcommand,
// the openai client, telemetry) still loaded only when needed. Loading ~250 small modules cost each
// process more CPU than its work for short commands (see BENCHMARKS.md, issue 23). Our code, zod and
// compromise (the floor's English reader: its ES build is some hundred modules, loaded by every
// process's first task; bundled, about 0.25 s less CPU a process, same words and tags) and yaml (the
// persona files' reader, some sixty CommonJS files that every run resolves and compiles one by one) are bundled;
// other packages stay external (loaded from node_modules as they are), since they resolve data
// files, optional native parts or their own lazy loading at run time.
import { builtinModules } from 'node:module';

// @oxc-project/runtime: the helpers rolldown itself may insert (a tagged template whose raw text differs from its value);
// efrt, grad-school and suffix-thumb: compromise's own dependencies.
const bundled = new Set(['zod', '@oxc-project/runtime', 'compromise', 'efrt', 'grad-school', 'suffix-thumb', 'yaml']);
const isExternal = (id) => {
  if (id.startsWith('node:') || builtinModules.includes(id)) return true;
  if (id.startsWith('.') || id.startsWith('/')) return false;
  const name = id.startsWith('@') ? id.split('/').slice(0, 2).join('/') : id.split('/')[0];
  return !bundled.has(name);
};

export default {
  input: { main: 'dist/cli/main.js' },
  platform: 'node',
  external: isExternal,
  logLevel: 'warn',
  // No syntax lowering (Node 20 runs all of it), so no helper runtime is imported.
  transform: { target: 'node20' },
  output: { dir: 'dist/bundle', format: 'esm', chunkFileNames: '[name]-[hash].js', sourcemap: false },
};
