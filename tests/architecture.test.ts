import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '..', 'src');

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.join(e.parentPath, e.name));
}

const ROOT = path.resolve(import.meta.dirname, '..');
const RULES = createRequire(import.meta.url)(path.join(ROOT, '.dependency-cruiser.cjs')) as {
  forbidden: unknown[];
  options: Record<string, unknown>;
};

/** The source tree as dependency-cruiser reads it, against the project's rules (.dependency-cruiser.cjs). */
async function cruiseSources(files: string[]): Promise<IViolation[]> {
  const result = await cruise(files, { ...RULES.options, validate: true, ruleSet: { forbidden: RULES.forbidden } } as never, undefined, {
    tsConfig: { fileName: path.join(ROOT, 'tsconfig.json') },
  } as never);
  return (result.output as ICruiseResult).summary.violations;
}

const describeViolation = (v: IViolation): string =>
  `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' → ')})` : ''}`;

describe('architecture (dependency-cruiser)', () => {
  it('has no import cycle, and every arrow points the allowed way: cli → app → domain ← adapters, only the composition root wires adapters', async () => {
    const before = process.cwd();
    process.chdir(ROOT);
    try {
      expect((await cruiseSources(['src'])).map(describeViolation)).toEqual([]);
    } finally {
      process.chdir(before);
    }
  });

  it('would fail on a new cycle or a cli → adapters import', async () => {
    const before = process.cwd();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-arch-'));
    try {
      await mkdir(path.join(dir, 'src', 'cli'), { recursive: true });
      await mkdir(path.join(dir, 'src', 'adapters'), { recursive: true });
      await mkdir(path.join(dir, 'src', 'domain'), { recursive: true });
      await writeFile(path.join(dir, 'src', 'cli', 'bad.ts'), "import { store } from '../adapters/store.js';\nexport const x = store;\n");
      await writeFile(path.join(dir, 'src', 'adapters', 'store.ts'), 'export const store = 1;\n');
      await writeFile(path.join(dir, 'src', 'domain', 'a.ts'), "import { b } from './b.js';\nexport const a = () => b;\n");
      await writeFile(path.join(dir, 'src', 'domain', 'b.ts'), "import { a } from './a.js';\nexport const b = () => a;\n");
      await writeFile(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }),
      );
      process.chdir(dir);
      const names = (await cruiseSources(['src'])).map((v) => v.rule.name).sort();
      expect(names).toEqual(['cli-not-to-adapters', 'no-circular']);
    } finally {
      process.chdir(before);
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('layering', () => {
  it('keeps src/domain pure: no node:*, no SDKs, no clock, no randomness, no process', async () => {
    const offenders: string[] = [];
    for (const file of await filesUnder(path.join(SRC, 'domain'))) {
      const text = await readFile(file, 'utf8');
      const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      for (const [re, what] of [
        [/from ['"]node:/, 'imports node:*'],
        [/from ['"](openai|chalk|ora|commander|@opentelemetry\/[a-z-]+)['"]/, 'imports an adapter library'],
        [/Date\.now\(|new Date\(\)/, 'reads the clock'],
        [/Math\.random/, 'uses randomness'],
        [/\bprocess\./, 'touches process'],
        [/\bconsole\./, 'writes to the console'],
        [/from ['"]\.\.\/(app|adapters|cli)\//, 'imports an outer layer'],
      ] as const) {
        if (re.test(code)) offenders.push(`${path.relative(SRC, file)} ${what}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('keeps src/app free of direct I/O and of the CLI', async () => {
    const offenders: string[] = [];
    for (const file of await filesUnder(path.join(SRC, 'app'))) {
      const code = await readFile(file, 'utf8');
      if (/from ['"]node:(fs|child_process|net|http)/.test(code)) offenders.push(`${path.relative(SRC, file)} does I/O`);
      if (/from ['"]\.\.\/cli\//.test(code)) offenders.push(`${path.relative(SRC, file)} imports the CLI`);
    }
    expect(offenders).toEqual([]);
  });

  it('loads OpenTelemetry only when tracing is configured: from the SDK modules of src/adapters/otel/, reached by one dynamic import', async () => {
    const offenders: string[] = [];
    for (const file of await filesUnder(SRC)) {
      const name = path.relative(SRC, file);
      const code = await readFile(file, 'utf8');
      const isOtel = /^adapters\/otel\/(sdk-telemetry|genai|run-summary|run-tracer|fetch-exporter)\.ts$/.test(name);
      if (!isOtel && /from ['"]@opentelemetry\//.test(code)) offenders.push(`${name} imports @opentelemetry`);
      // A static (non-type) import of an otel-* module would load the SDK with its importer.
      if (
        !isOtel &&
        /^import (?!type )[^;]*from ['"][./a-z]*\/(sdk-telemetry|genai|run-summary|run-tracer|fetch-exporter)\.js['"]/m.test(code)
      )
        offenders.push(`${name} imports an OpenTelemetry SDK module statically`);
    }
    expect(offenders).toEqual([]);
    const loader = await readFile(path.join(SRC, 'adapters', 'otel', 'telemetry.ts'), 'utf8');
    expect(loader).toMatch(/await import\('\.\/sdk-telemetry\.js'\)/);
  });

  it('loads undici and the openai SDK only with the first endpoint call: type imports and one dynamic import each', async () => {
    const offenders: string[] = [];
    for (const file of await filesUnder(SRC)) {
      const code = await readFile(file, 'utf8');
      if (/^import (?!type )[^;]*from ['"](undici|openai)(\/[^'"]*)?['"]/m.test(code))
        offenders.push(`${path.relative(SRC, file)} imports undici or openai statically`);
    }
    expect(offenders).toEqual([]);
    expect(await readFile(path.join(SRC, 'adapters', 'model', 'endpoint-fetch.ts'), 'utf8')).toMatch(/await import\('undici'\)/);
    expect(await readFile(path.join(SRC, 'adapters', 'model', 'openai-llm-client.ts'), 'utf8')).toMatch(/await import\('openai'\)/);
  });

  it('sets exit codes only in the CLI entry', async () => {
    const offenders: string[] = [];
    for (const file of await filesUnder(SRC)) {
      if (/process\.exit\(/.test(await readFile(file, 'utf8'))) offenders.push(path.relative(SRC, file));
    }
    expect(offenders).toEqual([]);
  });
});
