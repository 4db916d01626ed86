// `npm run bench -- cost`: issue 37. What a run costs as the council remembers more, in tokens: a
// chat-completions server on 127.0.0.1 counts every prompt with the o200k tokenizer and reports what
// a provider's prefix cache would serve (tests/helpers/prompt-meter.mjs: the longest prefix shared with
// an earlier request, in blocks of 1,024 tokens). Two sequences, each on a fresh workspace and a fresh
// cache: the same task five times, and nine different tasks (tests/helpers/varied-tasks.mjs). The
// counts are the server's, not maestro's, so builds of any design compare.
//
// BENCH_BUILDS="name=path/to/bin/maestro.js,…": those builds instead of this checkout (the first is
// the one the others are compared with), e.g. the previous design's, checked out and built elsewhere.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { CLI, completionBody, instantContent, machine, ROOT, writeSection } from './report.mjs';

const { PromptMeter } = await import(path.join(ROOT, 'tests', 'helpers', 'prompt-meter.mjs'));
const { TASKS } = await import(path.join(ROOT, 'tests', 'helpers', 'varied-tasks.mjs'));

const BUILDS = (process.env.BENCH_BUILDS ?? `this=${CLI}`).split(',').map((b) => {
  const [name, cli] = b.split('=');
  return { name, cli: path.resolve(cli) };
});
/** What each council member says: a paragraph of the length a model gives when asked for a short turn. */
const TURN =
  'I agree with the direction, with two conditions. First, the change should be reversible: keep the current system running beside the new one until the numbers hold for a week. Second, name one owner and a date for the decision, so it does not drift. The main risk I see is the cost estimate, which rests on last quarter’s traffic; I would check it against the peak before we commit.';
const SEQUENCES = [
  { name: 'the same task, five times', tasks: Array.from({ length: 5 }, () => TASKS[0]) },
  { name: 'nine different tasks', tasks: TASKS },
];

/** A chat-completions server that counts every prompt (and its cached prefix) with its own meter. */
function meteredServer() {
  const meter = new PromptMeter();
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const json = JSON.parse(body);
      const usage = meter.measure(json.messages ?? []);
      requests.push(usage);
      const content = instantContent(json, TURN);
      const completion = Math.ceil(content.length / 4);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          completionBody(json.model, content, {
            ...usage,
            completion_tokens: completion,
            total_tokens: usage.prompt_tokens + completion,
            prompt_tokens_details: { cached_tokens: usage.cached_tokens },
          }),
        ),
      );
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, requests })));
}

function run(cli, ws) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'run', 'task.json', '--json'], { cwd: ws, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.resume();
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`maestro run exited ${code}: ${err.slice(-500)}`))));
  });
}

/** Per run of the sequence: the prompt tokens the server counted, and how many of them its cache served. */
async function measure(cli, tasks) {
  const { server, requests } = await meteredServer();
  const ws = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-cost-'));
  try {
    await new Promise((resolve, reject) =>
      spawn(process.execPath, [cli, 'init', ws], { stdio: 'ignore' }).on('exit', (c) =>
        c === 0 ? resolve() : reject(new Error('init failed')),
      ),
    );
    const local = { provider: 'openai', model: 'bench', base_url: `http://127.0.0.1:${server.address().port}/v1`, max_retries: 0 };
    await writeFile(path.join(ws, 'maestro.config.json'), JSON.stringify({ default_route: 'local', routes: { local } }));
    const runs = [];
    for (const [n, task] of tasks.entries()) {
      await writeFile(path.join(ws, 'task.json'), JSON.stringify({ task_description: task, output_artifact_path: `outputs/${n}.md` }));
      const from = requests.length;
      await run(cli, ws);
      const mine = requests.slice(from);
      runs.push({
        prompt: mine.reduce((s, r) => s + r.prompt_tokens, 0),
        cached: mine.reduce((s, r) => s + r.cached_tokens, 0),
        calls: mine.length,
      });
    }
    return runs;
  } finally {
    server.closeAllConnections();
    server.close();
    await rm(ws, { recursive: true, force: true });
  }
}

const k = (n) => `${(n / 1000).toFixed(1)} k`;
const pct = (a, b) => `${b === 0 ? 0 : Math.round((100 * a) / b)} %`;

export default async function bench() {
  const lines = [
    `Machine: ${machine()}. Command: \`${process.env.BENCH_BUILDS ? 'BENCH_BUILDS=<builds> ' : ''}npm run bench -- cost\` (bench/cost.bench.mjs).`,
    '',
    'Prompt tokens per run as a chat-completions server on 127.0.0.1 counted them (o200k tokenizer), and the share its simulated prefix cache served (the longest prefix shared with an earlier request, in blocks of 1,024 tokens). Each sequence on a fresh workspace and cache, default council (3 personas, 13 calls a run), every member replying with the same 75-word paragraph.',
    '',
    'The previous design (commit 1e73e11, before issue 37) gave each persona the whole transcripts of its latest runs up to `history.max_tokens` (6,000 by default): the prompt grew with every task until the budget, and much of it was cached because each run repeated the last. This build gives a summary per earlier task (the latest 2) and up to 2 recalled lines within `history.max_tokens` (1,500 by default). "Billed" counts the prompt tokens at full price plus the cached ones at a fraction (½: OpenAI; ⅒: the deepest discounts).',
    '',
  ];
  for (const seq of SEQUENCES) {
    const results = [];
    for (const build of BUILDS) {
      const runs = await measure(build.cli, seq.tasks);
      results.push({ build, runs });
      console.log(`${seq.name} · ${build.name}: ${runs.map((r) => `${r.prompt}/${r.cached}`).join(' ')}`);
    }
    const head = ['Run', ...results.map((r) => `${r.build.name}: prompt tokens (cached)`)];
    lines.push(`**${seq.name}**`, '', `| ${head.join(' | ')} |`, `|${head.map(() => '---|').join('')}`);
    for (let i = 0; i < seq.tasks.length; i++)
      lines.push(
        `| ${i + 1} | ${results.map(({ runs }) => `${k(runs[i].prompt)} (${pct(runs[i].cached, runs[i].prompt)})`).join(' | ')} |`,
      );
    const growth = ({ runs }) => `${(Math.max(...runs.slice(1).map((r) => r.prompt)) / runs[0].prompt).toFixed(2)}×`;
    const total = ({ runs }) => runs.reduce((s, r) => s + r.prompt, 0);
    // What the prompts are billed as, in full-price tokens, where cached ones cost half (OpenAI) or a tenth (deeper discounts).
    const billed = (r, share) => k(r.runs.reduce((s, x) => s + x.prompt - x.cached * (1 - share), 0));
    lines.push(`| dearest run ÷ first | ${results.map(growth).join(' | ')} |`);
    lines.push(
      `| all runs | ${results
        .map(
          (r) =>
            `${k(total(r))} (${pct(
              r.runs.reduce((s, x) => s + x.cached, 0),
              total(r),
            )})`,
        )
        .join(' | ')} |`,
    );
    lines.push(`| all runs billed, cached at ½ price | ${results.map((r) => billed(r, 0.5)).join(' | ')} |`);
    lines.push(`| all runs billed, cached at ⅒ price | ${results.map((r) => billed(r, 0.1)).join(' | ')} |`, '');
  }
  await writeSection('What a run costs as the council remembers more (tokens)', lines.join('\n'));
}
