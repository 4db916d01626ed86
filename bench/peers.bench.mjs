// `npm run bench -- peers`: maestro beside its peers, in one interleaved run against one local
// chat-completions server that answers at once. The server timestamps every request it receives and
// every reply it finishes sending; the orchestration gap of a call is "reply sent → next request of
// the same client", so it counts everything a framework does between two model calls (parsing,
// state, checkpoints, prompts) and nothing of the model. Peers live in bench/peers/ with their own
// package.json (installed here on first use), so they never become maestro's dependencies.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { CLI, ROOT, instantContent, machine, percentile, writeSection } from './report.mjs';

const PEERS = path.join(ROOT, 'bench', 'peers');
const REPS = Number(process.env.BENCH_REPS ?? 8);
const CALLS = 24; // model calls per batch and system

function ensurePeers() {
  if (existsSync(path.join(PEERS, 'node_modules', '@openai', 'agents'))) return;
  console.log('installing the peers into bench/peers/ (npm ci) …');
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: PEERS, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm ci in bench/peers failed');
}
const peersLoader = () => import(pathToFileURL(path.join(PEERS, 'load.mjs')).href);
const peer = async (name) => (await peersLoader()).load(name);
const peerVersion = async (name) => JSON.parse(await readFile(path.join(PEERS, 'node_modules', name, 'package.json'), 'utf8')).version;

/** The instant server: tags each request by its `model` field and records the gaps per tag. */
function instantServer() {
  const last = new Map(); // tag → time the previous reply finished
  const gaps = new Map(); // tag → [ms]
  const firstAt = new Map(); // tag → time of the first request since reset
  let served = 0;
  const server = http.createServer((req, res) => {
    const arrived = performance.now();
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const json = JSON.parse(body);
      const tag = String(json.model);
      if (last.has(tag)) (gaps.get(tag) ?? gaps.set(tag, []).get(tag)).push(arrived - last.get(tag));
      if (!firstAt.has(tag)) firstAt.set(tag, arrived);
      const content = instantContent(json, 'A short, useful reply from the council member.');
      const payload = {
        id: `chatcmpl-${++served}`,
        object: 'chat.completion',
        created: 0,
        model: json.model,
        choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content, refusal: null } }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload), () => last.set(tag, performance.now()));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}/v1`,
        gaps,
        firstAt,
        /** Forget the last reply of a tag, so the pause between two batches is not counted as a gap. */
        reset: (tag) => {
          last.delete(tag);
          firstAt.delete(tag);
        },
        close: () => new Promise((r) => server.close(r)),
      }),
    ),
  );
}

async function systems(url) {
  const { default: OpenAI } = await import(path.join(ROOT, 'node_modules', 'openai', 'index.mjs'));
  const bare = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });

  const agents = await peer('@openai/agents');
  agents.setTracingDisabled(true);
  const agentsClient = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
  const council = ['coordinator', 'strategist', 'auditor'].map(
    (name) =>
      new agents.Agent({
        name,
        instructions: `You are the ${name}.`,
        model: new agents.OpenAIChatCompletionsModel(agentsClient, 'agents'),
      }),
  );

  const { StateGraph, MessagesAnnotation, START, END } = await peer('@langchain/langgraph');
  const { ChatOpenAI } = await peer('@langchain/openai');
  const chat = new ChatOpenAI({ model: 'langgraph', apiKey: 'x', configuration: { baseURL: url }, maxRetries: 0 });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('speak', async (state) => ({ messages: [await chat.invoke(state.messages)] }))
    .addEdge(START, 'speak')
    .addConditionalEdges('speak', (state) => (state.messages.length > CALLS ? END : 'speak'))
    .compile();

  return {
    'bare openai SDK loop': async () => {
      const messages = [{ role: 'user', content: 'Assess the plan.' }];
      for (let i = 0; i < CALLS; i++) {
        const r = await bare.chat.completions.create({ model: 'bare', messages });
        messages.push({ role: 'assistant', content: r.choices[0].message.content }, { role: 'user', content: 'Go on.' });
      }
    },
    'OpenAI Agents JS': async () => {
      let history = 'Assess the plan.';
      for (let i = 0; i < CALLS; i++) {
        const result = await agents.run(council[i % council.length], history);
        history = [...result.history, { role: 'user', content: 'Go on.' }];
      }
    },
    'LangGraph.js': async () => {
      await graph.invoke({ messages: [{ role: 'user', content: 'Assess the plan.' }] }, { recursionLimit: CALLS * 2 + 5 });
    },
  };
}

/** One long-lived `maestro watch` on a workspace routed to the server; `batch()` drops commands and waits for them. */
async function maestroWatch(url, cli = CLI, model = 'maestro') {
  const ws = await mkdtemp(path.join(os.tmpdir(), 'maestro-bench-peers-'));
  await cp(path.join(ROOT, 'personas'), path.join(ws, 'personas'), { recursive: true });
  await mkdir(path.join(ws, 'commands'));
  await writeFile(
    path.join(ws, 'maestro.config.json'),
    JSON.stringify({ default_route: 'local', routes: { local: { provider: 'openai', model, base_url: url, max_retries: 0 } } }),
  );
  const child = spawn(process.execPath, [cli, 'watch', '--json', '--workspace', ws], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  process.on('exit', () => child.kill('SIGKILL'));
  let buffer = '';
  let waiting;
  let finished = 0;
  let started;
  const ready = new Promise((r) => (started = r));
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const e = JSON.parse(line);
      if (e.kind === 'started') started();
      if (e.kind === 'finished') {
        if (e.status !== 'completed') console.error(`maestro run ended ${e.status}: ${JSON.stringify(e)}`);
        finished++;
        waiting?.();
      }
    }
  });
  await ready;
  let n = 0;
  const perRun = 7; // 3 turns + 3 verdicts + 1 synthesis with max_rounds 1
  return {
    batch: async () => {
      const runs = Math.ceil(CALLS / perRun);
      const target = finished + runs;
      const done = new Promise((resolve) => {
        waiting = () => finished >= target && resolve();
      });
      for (let i = 0; i < runs; i++) {
        const file = path.join(ws, `.tmp-${n}.json`);
        await writeFile(file, JSON.stringify({ task_description: `Review rollout plan ${n} of the bench`, config: { max_rounds: 1 } }));
        await rename(file, path.join(ws, 'commands', `bench-${n++}.json`));
      }
      await done;
    },
    close: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.on('exit', r));
      await rm(ws, { recursive: true, force: true });
    },
  };
}

function importTime(code, cwd) {
  const t = performance.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return performance.now() - t;
}

export default async function bench() {
  ensurePeers();
  const server = await instantServer();
  const peers = await systems(server.url);
  const watch = await maestroWatch(server.url);
  const tags = {
    'bare openai SDK loop': 'bare',
    'OpenAI Agents JS': 'agents',
    'LangGraph.js': 'langgraph',
    'maestro, many runs in one `watch`': 'maestro',
  };
  const all = { ...peers, 'maestro, many runs in one `watch`': watch.batch };
  // BENCH_BASELINE=<another checkout's bin/maestro.js>: that build too, in the same rounds (before/after in one run).
  const baseline = process.env.BENCH_BASELINE
    ? await maestroWatch(server.url, path.resolve(process.env.BENCH_BASELINE), 'baseline')
    : undefined;
  if (baseline) {
    tags['maestro baseline (BENCH_BASELINE), many runs in one `watch`'] = 'baseline';
    all['maestro baseline (BENCH_BASELINE), many runs in one `watch`'] = baseline.batch;
  }
  // Warm-up, then REPS rounds; each round runs every system once, in a rotating order.
  for (const [name, fn] of Object.entries(all)) {
    const t = performance.now();
    await fn();
    if (process.env.BENCH_DEBUG) console.error(`warm-up ${name}: ${(performance.now() - t).toFixed(0)} ms`);
  }
  for (const tag of Object.values(tags)) server.gaps.delete(tag);
  const names = Object.keys(all);
  for (let rep = 0; rep < REPS; rep++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(rep + k) % names.length];
      server.reset(tags[name]);
      await all[name]();
    }
  }
  await watch.close();
  await baseline?.close();
  await server.close();
  // BENCH_GAPS=<file>: every gap per system, in arrival order (to see which calls of a run are slow).
  if (process.env.BENCH_GAPS) await writeFile(process.env.BENCH_GAPS, JSON.stringify(Object.fromEntries(server.gaps)));

  const startup = { openai: [], agents: [], langgraph: [], maestro: [] };
  for (let i = 0; i < 7; i++) {
    startup.openai.push(importTime("await import('openai')", ROOT));
    startup.agents.push(importTime("await import('@openai/agents')", PEERS));
    startup.langgraph.push(importTime("await import('@langchain/langgraph'); await import('@langchain/openai')", PEERS));
    const t = performance.now();
    spawnSync(process.execPath, [CLI, '--version']);
    startup.maestro.push(performance.now() - t);
  }
  const med = (xs) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const rows = Object.entries(tags).map(([name, tag]) => {
    const g = [...(server.gaps.get(tag) ?? [])].sort((a, b) => a - b);
    return { name, tag, p50: percentile(g, 50), p95: percentile(g, 95), n: g.length };
  });
  const best = Math.min(rows.find((r) => r.tag === 'agents').p50, rows.find((r) => r.tag === 'langgraph').p50);
  const body = [
    `Machine: ${machine()}`,
    `Command: \`npm run bench -- peers\` (bench/peers.bench.mjs): one local chat-completions server on 127.0.0.1 that answers at once; ${REPS} interleaved rounds (after a warm-up), each running every system for ${CALLS} model calls in a rotating order. Gap = the server finished sending a reply → the same client's next request arrived. Peers: @openai/agents ${await peerVersion('@openai/agents')}, @langchain/langgraph ${await peerVersion('@langchain/langgraph')} (bench/peers/package.json). maestro: 3 personas, max_rounds 1 (7 calls a run), the openai provider, every run's checkpoint and audit records durable before its next call.`,
    '',
    '| system | gap p50 | gap p95 | gaps | ratio to the best peer (p50) |',
    '|---|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${r.p50.toFixed(2)} ms | ${r.p95.toFixed(2)} ms | ${r.n} | ${(r.p50 / best).toFixed(2)}× |`),
    '',
    '| start-up (median of 7, spawn → exit) | ms |',
    '|---|---:|',
    `| \`node -e "await import('openai')"\` | ${med(startup.openai).toFixed(0)} |`,
    `| \`await import('@openai/agents')\` | ${med(startup.agents).toFixed(0)} |`,
    `| \`await import('@langchain/langgraph')\` + \`@langchain/openai\` | ${med(startup.langgraph).toFixed(0)} |`,
    `| \`maestro --version\` | ${med(startup.maestro).toFixed(0)} (${(med(startup.maestro) / med(startup.openai)).toFixed(2)}× the openai import) |`,
  ].join('\n');
  console.log(body);
  await writeSection('maestro beside its peers: orchestration gap per model call and start-up', body);
}
