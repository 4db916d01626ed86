// Shared by the benchmarks: machine description and rewriting one section of BENCHMARKS.md.
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = path.join(ROOT, 'bin', 'maestro.js');

export function machine() {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return `${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.platform()} ${os.release()}, Node ${process.version}`;
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** Replaces (or appends) the section `## <title>` of BENCHMARKS.md with `body`. */
export async function writeSection(title, body) {
  const file = path.join(ROOT, 'BENCHMARKS.md');
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch {
    text =
      '# Benchmarks\n\nEvery figure below was produced by `npm run bench` (or `npm run bench -- <name>`) on the machine named in its section.\nBenchmarks are never timed tests: numbers vary by machine, so they are recorded here, not asserted.\n';
  }
  const heading = `## ${title}`;
  const section = `${heading}\n\n${body.trim()}\n`;
  const start = text.indexOf(`${heading}\n`);
  if (start === -1) text = `${text.trimEnd()}\n\n${section}`;
  else {
    const next = text.indexOf('\n## ', start + heading.length);
    text = `${text.slice(0, start)}${section}${next === -1 ? '' : text.slice(next)}`;
  }
  await writeFile(file, text.endsWith('\n') ? text : `${text}\n`);
}

/** A chat-completions reply carrying `content`, as an OpenAI-compatible server sends it (its usage: `usage`). */
export function completionBody(model, content, usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }) {
  return {
    id: 'x',
    object: 'chat.completion',
    created: 0,
    model,
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
    usage,
  };
}

/**
 * What an instant chat-completions server answers: the mediator's classification (nothing to flag),
 * an assessment or a verdict when JSON is asked for, else `text`.
 */
export function instantContent(json, text) {
  const first = json.messages?.[0]?.content;
  if (typeof first === 'string' && first.startsWith('You read tasks'))
    return '{"deliverables": [], "acts": [], "domains": [], "high_stakes_case": [], "irreversible": false, "scale": false, "urgency": false, "intent_clear": true, "personal_preference": false}';
  const schema = json.response_format?.json_schema;
  if (schema?.name === 'assessment') {
    // Assessment modes (parallel, hierarchical): every vector the schema names, scored.
    const names = Object.keys(schema.schema?.properties?.vectors?.properties ?? {});
    const vectors = Object.fromEntries(names.map((v) => [v, { score: 0.8, rationale: 'ok' }]));
    return JSON.stringify({ action: 'proceed', confidence: 0.8, rationale: 'ok', vectors });
  }
  if (json.response_format && json.response_format.type !== 'text') return '{"action":"proceed","confidence":0.8,"rationale":"ok"}';
  return text;
}
