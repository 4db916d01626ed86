import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parsePersonaFile, sortPersonas, type Persona } from '../../domain/persona.js';
import type { PersonaLoad, PersonaStore } from '../../domain/ports.js';

/**
 * Reads `personas/*.md`. A broken file is reported with its name and problems, never skipped silently.
 * Every load reads the files again (a person may edit them between runs); a file whose text has not
 * changed is not parsed again.
 */
export class FsPersonaStore implements PersonaStore {
  readonly #parsed = new Map<string, { text: string; result: ReturnType<typeof parsePersonaFile> }>();

  constructor(private readonly dir: string) {}

  async loadAll(): Promise<PersonaLoad> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => n.endsWith('.md') && !n.startsWith('.')).sort();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const problem = code === 'ENOENT' ? 'there is no personas/ folder in this workspace (run `maestro init`)' : (error as Error).message;
      return { personas: [], problems: [{ file: 'personas/', issues: [problem] }] };
    }
    const personas: Persona[] = [];
    const problems: PersonaLoad['problems'] = [];
    for (const name of names) {
      const file = `personas/${name}`;
      let text: string;
      try {
        text = await readFile(path.join(this.dir, name), 'utf8');
      } catch (error) {
        problems.push({ file, issues: [`cannot be read (${(error as Error).message})`] });
        continue;
      }
      const cached = this.#parsed.get(name);
      const parsed =
        cached?.text === text
          ? cached.result
          : parsePersonaFile(text, (yaml) => parseYaml(yaml, { maxAliasCount: 10 }), { fileId: name.slice(0, -3), file });
      this.#parsed.set(name, { text, result: parsed });
      if (parsed.ok) personas.push(parsed.value);
      else problems.push({ file, issues: parsed.issues });
    }
    if (names.length === 0) problems.push({ file: 'personas/', issues: ['holds no persona files (*.md)'] });
    return { personas: sortPersonas(personas), problems };
  }
}
