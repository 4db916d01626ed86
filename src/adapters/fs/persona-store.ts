import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parsePersonaFile, sortPersonas, type Persona } from '../../domain/persona.js';
import type { PersonaLoad, PersonaStore } from '../../domain/ports.js';

/**
 * Reads `personas/*.md`. A broken file is reported with its name and problems, never skipped silently.
 * Every load reads the files again: a person may edit them between runs, and a watcher loads them
 * before every claim.
 */
export class FsPersonaStore implements PersonaStore {
  constructor(private readonly dir: string) {}

  async loadAll(): Promise<PersonaLoad> {
    let names: string[];
    try {
      // A README.md beside the personas documents them: it is not one.
      names = (await readdir(this.dir)).filter((n) => n.endsWith('.md') && !n.startsWith('.') && !/^readme\.md$/i.test(n)).sort();
    } catch (error) {
      const problem =
        (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'there is no personas/ folder in this workspace (run `maestro init`)'
          : (error as Error).message;
      return { personas: [], problems: [{ file: 'personas/', issues: [problem] }] };
    }
    const personas: Persona[] = [];
    const problems: PersonaLoad['problems'] = [];
    for (const name of names) {
      const file = `personas/${name}`;
      const parsed = await this.#parse(name, file);
      if (parsed.ok) personas.push(parsed.value);
      else problems.push({ file, issues: parsed.issues });
    }
    if (names.length === 0) problems.push({ file: 'personas/', issues: ['holds no persona files (*.md)'] });
    return { personas: sortPersonas(personas), problems };
  }

  /** One persona file read and validated. */
  async #parse(name: string, file: string): Promise<ReturnType<typeof parsePersonaFile>> {
    let text: string;
    try {
      text = await readFile(path.join(this.dir, name), 'utf8');
    } catch (error) {
      return { ok: false, issues: [`cannot be read (${(error as Error).message})`] };
    }
    return parsePersonaFile(text, (yaml) => parseYaml(yaml, { maxAliasCount: 10 }), { fileId: name.slice(0, -3), file });
  }
}
