import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parsePersonaFile, sortPersonas, type Persona } from '../../domain/persona.js';
import type { PersonaLoad, PersonaStore } from '../../domain/ports.js';
import { realStampSource, StampedCache, type StampSource } from './file-stamp.js';

type ParsedPersona = ReturnType<typeof parsePersonaFile>;
type Listing = { readonly names: readonly string[] } | { readonly problem: string };

/**
 * Reads `personas/*.md`. A broken file is reported with its name and problems, never skipped silently.
 * Every load looks at the files again (a person may edit them between runs, and a watcher loads them
 * before every claim), but a file, or the folder's listing, whose stamp has not changed since it was
 * last read (file-stamp.ts: inode, size, times, mode) is not read and validated again.
 */
export class FsPersonaStore implements PersonaStore {
  readonly #files: StampedCache<ParsedPersona>;
  readonly #listing: StampedCache<Listing>;

  /** `source`: how files are stat-ed and the time told (tests put in their own). */
  constructor(
    private readonly dir: string,
    source: StampSource = realStampSource,
  ) {
    this.#files = new StampedCache(source);
    this.#listing = new StampedCache(source);
  }

  async loadAll(): Promise<PersonaLoad> {
    const listing = await this.#listing.through(this.dir, () => this.#list());
    if ('problem' in listing) return { personas: [], problems: [{ file: 'personas/', issues: [listing.problem] }] };
    const personas: Persona[] = [];
    const problems: PersonaLoad['problems'] = [];
    for (const name of listing.names) {
      const file = `personas/${name}`;
      const parsed = await this.#files.through(path.join(this.dir, name), () => this.#parse(name, file));
      if (parsed.ok) personas.push(parsed.value);
      else problems.push({ file, issues: parsed.issues });
    }
    if (listing.names.length === 0) problems.push({ file: 'personas/', issues: ['holds no persona files (*.md)'] });
    return { personas: sortPersonas(personas), problems };
  }

  /** The persona file names in the folder, sorted, or why there are none (kept: the folder's stamp says when that changes). */
  async #list(): Promise<{ value: Listing; keep: boolean }> {
    try {
      // A README.md beside the personas documents them: it is not one.
      const names = (await readdir(this.dir)).filter((n) => n.endsWith('.md') && !n.startsWith('.') && !/^readme\.md$/i.test(n)).sort();
      return { value: { names }, keep: true };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT')
        return { value: { problem: 'there is no personas/ folder in this workspace (run `maestro init`)' }, keep: true };
      return { value: { problem: (error as Error).message }, keep: false };
    }
  }

  /** One persona file read and validated; a file that cannot be read is not kept (the next load tries again). */
  async #parse(name: string, file: string): Promise<{ value: ParsedPersona; keep: boolean }> {
    let text: string;
    try {
      text = await readFile(path.join(this.dir, name), 'utf8');
    } catch (error) {
      return { value: { ok: false, issues: [`cannot be read (${(error as Error).message})`] }, keep: false };
    }
    const value = parsePersonaFile(text, (yaml) => parseYaml(yaml, { maxAliasCount: 10 }), { fileId: name.slice(0, -3), file });
    return { value, keep: true };
  }
}
