import { mkdir, readFile, readdir, copyFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { EvalStore } from '../../domain/eval/ports.js';
import type { ResultLine } from '../../domain/eval/results.js';
import { appendDurably, writeFileAtomically, writeJsonAtomically } from './atomic-file.js';

/**
 * One eval's folder, `.maestro/eval/<name>/`: `spec.json` (what it measures), `results.jsonl` (each
 * result as it finished, fsynced), `report.json` and `report.md`, and `scratch/`, the workspace its
 * council runs happen in (so they never touch the workspace's runs, memory or loop policy).
 */
export class FsEvalFolder implements EvalStore {
  readonly dir: string;
  constructor(stateDir: string, name: string) {
    this.dir = path.join(stateDir, 'eval', name);
  }
  get results(): string {
    return path.join(this.dir, 'results.jsonl');
  }
  get scratch(): string {
    return path.join(this.dir, 'scratch');
  }
  get reportJson(): string {
    return path.join(this.dir, 'report.json');
  }
  get reportMarkdown(): string {
    return path.join(this.dir, 'report.md');
  }

  /** The spec this eval was started with, if it was. */
  async readSpec(): Promise<unknown> {
    const text = await readFile(path.join(this.dir, 'spec.json'), 'utf8').catch(missingAs(undefined));
    return text === undefined ? undefined : JSON.parse(text);
  }

  async writeSpec(spec: unknown): Promise<void> {
    await writeJsonAtomically(path.join(this.dir, 'spec.json'), spec);
  }

  /** Starts over: the results and the scratch runs go. */
  async clear(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }

  async readLines(): Promise<string[]> {
    const text = await readFile(this.results, 'utf8').catch(missingAs(''));
    // A line cut short by a crash is ended, so the next result starts on a line of its own.
    if (text !== '' && !text.endsWith('\n')) await appendDurably(this.results, '\n');
    return text.split('\n');
  }

  async append(line: ResultLine): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await appendDurably(this.results, `${JSON.stringify(line)}\n`);
  }

  async writeReport(json: unknown, markdown: string): Promise<void> {
    await writeJsonAtomically(this.reportJson, json);
    await writeFileAtomically(this.reportMarkdown, markdown);
  }

  /**
   * The scratch workspace: the workspace's config without its engine and telemetry (eval runs stay in
   * these files, untraced), and a copy of its persona files.
   */
  async prepareScratch(config: Record<string, unknown>, personasDir: string): Promise<void> {
    const { engine: _engine, telemetry: _telemetry, ...kept } = config;
    await mkdir(path.join(this.scratch, 'personas'), { recursive: true });
    await writeJsonAtomically(path.join(this.scratch, 'maestro.config.json'), kept);
    const names = await readdir(personasDir).catch(missingAs([] as string[]));
    for (const name of names.filter((n) => n.endsWith('.md')))
      await copyFile(path.join(personasDir, name), path.join(this.scratch, 'personas', name));
  }
}

function missingAs<T>(value: T): (error: unknown) => T {
  return (error) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return value;
    throw error;
  };
}
