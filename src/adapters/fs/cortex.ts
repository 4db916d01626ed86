import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import MiniSearch from 'minisearch';
import type { KnowledgeResult } from '../../domain/run-state.js';
import { deniedReason } from '../../domain/sandbox-rules.js';
import { readVettedFile } from './vetted-file.js';

export interface CortexOptions {
  readonly root: string;
  readonly roots: readonly string[];
  readonly deny: readonly string[];
  readonly sha256: (data: string) => string;
}

interface Doc {
  id: string;
  title: string;
  text: string;
}

const MAX_RESULTS = 5;
/** Files larger than this are not indexed. */
const MAX_FILE_BYTES = 1_000_000;
/** At most this many files are indexed (the rest are reported as skipped). */
const MAX_FILES = 5_000;

/**
 * `QUERY_CORTEX("search words")`: a ranked full-text search (MiniSearch, BM25-like) over the text
 * files of the knowledge roots, with the same rules as READ_FILE: denied paths and credential stores
 * are skipped by name, and every file is read through the same vetted open (one hard link, no
 * private key inside). Symlinks are not followed, so the index never reaches outside the workspace.
 * Built on the first query of a run.
 */
export class FsCortex {
  #index: Promise<{ search: MiniSearch<Doc>; docs: Map<string, Doc>; skipped: number }> | undefined;

  constructor(private readonly options: CortexOptions) {}

  async query(words: string): Promise<Omit<KnowledgeResult, 'action' | 'argument'>> {
    const q = words.trim();
    if (q.length === 0) return { status: 'error', message: 'empty search', reason_code: 'KNOWLEDGE_BAD_QUERY' };
    const { search, docs, skipped } = await (this.#index ??= this.#build());
    const hits = search.search(q, { prefix: true, fuzzy: 0.2, boost: { title: 2, id: 1.5 } }).slice(0, MAX_RESULTS);
    const terms = q
      .toLowerCase()
      .split(/\W+/)
      .filter((t) => t.length > 2);
    const lines = hits.map((h, i) => {
      const doc = docs.get(String(h.id));
      const snippet = doc ? snippetOf(doc.text, terms) : '';
      return `${i + 1}. ${String(h.id)} (score ${h.score.toFixed(2)})${snippet ? `\n   ${snippet}` : ''}`;
    });
    const body =
      hits.length === 0
        ? `No file in the knowledge base matches "${q}".`
        : `${hits.length} best match(es) for "${q}" — read one with READ_FILE(path):\n${lines.join('\n')}`;
    const content = skipped > 0 ? `${body}\n(${skipped} file(s) were too large or too many to index)` : body;
    return {
      status: 'provided',
      message: `${hits.length} result(s)`,
      bytes: Buffer.byteLength(content),
      sha256: this.options.sha256(content),
      content,
      reason_code: 'KNOWLEDGE_PROVIDED',
    };
  }

  async #build(): Promise<{ search: MiniSearch<Doc>; docs: Map<string, Doc>; skipped: number }> {
    const docs = new Map<string, Doc>();
    let skipped = 0;
    const walk = async (relDir: string): Promise<void> => {
      const abs = path.join(this.options.root, relDir);
      const entries = await readdir(abs, { withFileTypes: true }).catch(() => []);
      for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const rel = relDir === '.' || relDir === '' ? e.name : `${relDir}/${e.name}`;
        if (deniedReason(e.isDirectory() ? `${rel}/x` : rel, this.options.deny)) continue;
        if (e.isDirectory()) await walk(rel);
        else if (e.isFile()) {
          if (docs.size >= MAX_FILES) {
            skipped++;
            continue;
          }
          const read = await readIndexable(path.join(this.options.root, rel), MAX_FILE_BYTES);
          if (read === 'too-large') skipped++;
          if (typeof read !== 'string') continue;
          const title =
            read
              .split('\n')
              .map((l) => l.replace(/^#+\s*/, '').trim())
              .find((l) => l.length > 0) ?? rel;
          docs.set(rel, { id: rel, title: title.slice(0, 200), text: read });
        }
      }
    };
    for (const r of this.options.roots) await walk(path.posix.normalize(r.replace(/\\/g, '/')).replace(/\/$/, '') || '.');
    const search = new MiniSearch<Doc>({ fields: ['id', 'title', 'text'], storeFields: [], idField: 'id' });
    search.addAll([...docs.values()]);
    return { search, docs, skipped };
  }
}

/**
 * A file's text for the index, through the same checks as READ_FILE (one hard link, not binary, no
 * private key inside), or why it is left out. A file left out is never named in a result either.
 */
async function readIndexable(file: string, maxBytes: number): Promise<string | 'too-large' | 'withheld'> {
  const info = await lstat(file).catch(() => undefined);
  if (!info) return 'withheld';
  if (info.size > maxBytes) return 'too-large';
  const vetted = await readVettedFile(file, maxBytes);
  return vetted.ok ? vetted.data.toString('utf8') : 'withheld';
}

function snippetOf(text: string, terms: readonly string[]): string {
  const line = text.split('\n').find((l) => terms.some((t) => l.toLowerCase().includes(t))) ?? '';
  const flat = line.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
}
