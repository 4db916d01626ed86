import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { isBinaryFile } from 'isbinaryfile';
import MiniSearch from 'minisearch';
import type { KnowledgeResult } from '../domain/run-state.js';
import { deniedReason } from '../domain/sandbox-rules.js';

export interface CortexOptions {
  readonly root: string;
  readonly roots: readonly string[];
  readonly deny: readonly string[];
  readonly sha256: (data: string) => string;
  /** Files larger than this are not indexed. */
  readonly maxFileBytes?: number;
  /** At most this many files are indexed (the rest are reported as skipped). */
  readonly maxFiles?: number;
}

interface Doc {
  id: string;
  title: string;
  text: string;
}

const MAX_RESULTS = 5;

/**
 * `QUERY_CORTEX("search words")`: a ranked full-text search (MiniSearch, BM25-like) over the text
 * files of the knowledge roots, with the same deny rules as READ_FILE. Symlinks are not followed, so
 * the index never reaches outside the workspace. Built on the first query of a run.
 */
export class FsCortex {
  #index: Promise<{ search: MiniSearch<Doc>; docs: Map<string, Doc>; skipped: number }> | undefined;

  constructor(private readonly options: CortexOptions) {}

  async query(words: string): Promise<Omit<KnowledgeResult, 'action' | 'argument'>> {
    const q = words.trim();
    if (q.length === 0) return { status: 'error', message: 'empty search', reason_code: 'KNOWLEDGE_BAD_QUERY' };
    const { search, docs, skipped } = await (this.#index ??= this.#build());
    const hits = search.search(q, { prefix: true, fuzzy: 0.2, boost: { title: 2, id: 1.5 } }).slice(0, MAX_RESULTS);
    const terms = q.toLowerCase().split(/\W+/).filter((t) => t.length > 2);
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
    return { status: 'provided', message: `${hits.length} result(s)`, bytes: Buffer.byteLength(content), sha256: this.options.sha256(content), content, reason_code: 'KNOWLEDGE_PROVIDED' };
  }

  async #build(): Promise<{ search: MiniSearch<Doc>; docs: Map<string, Doc>; skipped: number }> {
    const maxBytes = this.options.maxFileBytes ?? 1_000_000;
    const maxFiles = this.options.maxFiles ?? 5_000;
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
          if (docs.size >= maxFiles) {
            skipped++;
            continue;
          }
          const file = path.join(this.options.root, rel);
          const info = await lstat(file).catch(() => undefined);
          if (!info || info.size > maxBytes) {
            skipped++;
            continue;
          }
          const data = await readFile(file).catch(() => undefined);
          if (!data || (data.length > 0 && (await isBinaryFile(data, data.length)))) continue;
          const text = data.toString('utf8');
          const title = text.split('\n').map((l) => l.replace(/^#+\s*/, '').trim()).find((l) => l.length > 0) ?? rel;
          docs.set(rel, { id: rel, title: title.slice(0, 200), text });
        }
      }
    };
    for (const r of this.options.roots) await walk(path.posix.normalize(r.replace(/\\/g, '/')).replace(/\/$/, '') || '.');
    const search = new MiniSearch<Doc>({ fields: ['id', 'title', 'text'], storeFields: [], idField: 'id' });
    search.addAll([...docs.values()]);
    return { search, docs, skipped };
  }
}

function snippetOf(text: string, terms: readonly string[]): string {
  const line = text.split('\n').find((l) => terms.some((t) => l.toLowerCase().includes(t))) ?? '';
  const flat = line.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 199)}…` : flat;
}
