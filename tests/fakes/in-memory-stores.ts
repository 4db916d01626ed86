import { type ArtifactPlacement, artifactBase, artifactPathBeside, artifactRunId, describeOwner } from '../../src/domain/artifact-place.js';
import path from 'node:path';
import { KNOWLEDGE_ACTIONS, type Persona } from '../../src/domain/persona.js';
import { emptyLoopPolicy, type LoopPolicyData } from '../../src/domain/loop-policy/workspace-loop.js';
import type {
  AppendRunOptions,
  ArtifactWriter,
  Clock,
  InputReader,
  KnowledgeBase,
  LoopPolicyStore,
  OutputPathCheck,
  PersonaLoad,
  PersonaStore,
  SessionLoad,
  SessionStore,
} from '../../src/domain/ports.js';
import type { KnowledgeResult } from '../../src/domain/run-state.js';
import { deniedReason, outputDeniedReason } from '../../src/domain/sandbox-rules.js';
import type { Passage } from '../../src/domain/memory/passages.js';
import { appendRun, compactSession, emptySessionState, type RunMemory, type SessionState } from '../../src/domain/session-state.js';
import { aPersona } from './fixtures.js';

/** The default council of the example workspace, as persona records. */
export function triad(): Persona[] {
  return [
    aPersona({ id: 'coordinator', name: 'Coordinator', order: 1, prompt: 'You are the Coordinator.', file: 'personas/coordinator.md' }),
    aPersona({ id: 'strategist', name: 'Strategist', order: 2, prompt: 'You are the Strategist.', file: 'personas/strategist.md' }),
    aPersona({ id: 'auditor', name: 'Auditor', order: 3, prompt: 'You are the Auditor.', file: 'personas/auditor.md' }),
  ];
}

/** Personas held in memory; `problems` are broken files as the files' store reports them. */
export class InMemoryPersonaStore implements PersonaStore {
  constructor(
    public personas: Persona[] = triad(),
    public problems: PersonaLoad['problems'] = [],
  ) {}

  async loadAll(): Promise<PersonaLoad> {
    return { personas: [...this.personas], problems: [...this.problems] };
  }
}

/** Persona memory in memory, with the files' store's rules (idempotent by run id, oldest runs archived). */
export class InMemorySessionStore implements SessionStore {
  readonly states = new Map<string, SessionState>();
  readonly archived = new Map<string, Passage[]>();
  readonly #corrupt = new Set<string>();
  /** Set to make `appendRun` fail (a full disk). */
  failAppend: Error | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly keepRuns = 30,
  ) {}

  /** The persona's next load finds its memory corrupt: it is set aside and the persona starts fresh. */
  corrupt(personaId: string): void {
    this.#corrupt.add(personaId);
  }

  async load(personaId: string, options: { leaveCorrupt?: boolean } = {}): Promise<SessionLoad> {
    const now = this.clock.now().toISOString();
    if (options.leaveCorrupt && this.#corrupt.has(personaId))
      return {
        state: emptySessionState(personaId, now),
        corrupt: { file: `session_states/${personaId}_session.json`, problem: 'not valid JSON' },
      };
    if (this.#corrupt.delete(personaId)) {
      this.states.delete(personaId);
      return {
        state: emptySessionState(personaId, now),
        recovered: { movedTo: `session_states/${personaId}_session.json.corrupt-x`, problem: 'not valid JSON' },
      };
    }
    return { state: this.states.get(personaId) ?? emptySessionState(personaId, now) };
  }

  async appendRun(personaId: string, runId: string, memory: RunMemory, _options: AppendRunOptions = {}): Promise<SessionLoad['recovered']> {
    if (this.failAppend) throw this.failAppend;
    const { state, recovered } = await this.load(personaId);
    const appended = appendRun(state, runId, memory, this.clock.now().toISOString());
    const { state: kept, moved } = compactSession(appended, this.keepRuns);
    this.archived.set(personaId, [...(this.archived.get(personaId) ?? []), ...moved]);
    this.states.set(personaId, kept);
    return recovered;
  }

  async recallArchive(personaId: string, terms: readonly string[], limit: number): Promise<Passage[]> {
    return (this.archived.get(personaId) ?? []).filter((p) => terms.some((t) => p.text.toLowerCase().includes(t))).slice(-limit);
  }

  async update(personaId: string, change: (state: SessionState) => SessionState): Promise<SessionLoad['recovered']> {
    const { state, recovered } = await this.load(personaId);
    this.states.set(personaId, change(state));
    return recovered;
  }
}

/** The workspace's loop policy in memory; updates are applied one at a time, as under the files' lock. */
export class InMemoryLoopPolicyStore implements LoopPolicyStore {
  data: LoopPolicyData;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(clock: Clock, sessionId = 'S-test') {
    this.data = emptyLoopPolicy(sessionId, clock.now().toISOString());
  }

  async read(): Promise<LoopPolicyData> {
    return this.data;
  }

  update<T>(fn: (data: LoopPolicyData) => { data: LoopPolicyData; result: T }): Promise<T> {
    const next = this.#queue.then(() => {
      const out = fn(this.data);
      this.data = out.data;
      return out.result;
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }
}

/**
 * A workspace's files in memory: the inputs and knowledge a council may read (by the sandbox's
 * rules: nothing outside the workspace, nothing denied) and the artifacts it writes.
 */
export class InMemoryWorkspace implements KnowledgeBase, InputReader, ArtifactWriter {
  readonly files = new Map<string, string>();
  /** Artifacts written, by workspace-relative path. */
  readonly artifacts = new Map<string, string>();

  constructor(
    files: Record<string, string> = {},
    private readonly options: { maxFileBytes?: number; sha256?: (text: string) => string } = {},
  ) {
    for (const [name, content] of Object.entries(files)) this.files.set(name, content);
  }

  async fulfil(request: { action: string; argument: string }, persona: Pick<Persona, 'id' | 'privileges'>): Promise<KnowledgeResult> {
    const { action, argument } = request;
    if (!(KNOWLEDGE_ACTIONS as readonly string[]).includes(action))
      return { action, argument, status: 'refused', message: 'unsupported action', reason_code: 'KNOWLEDGE_UNSUPPORTED_ACTION' };
    if (!(persona.privileges as readonly string[]).includes(action)) {
      return {
        action,
        argument,
        status: 'refused',
        message: `persona "${persona.id}" does not have the ${action} privilege`,
        reason_code: 'KNOWLEDGE_PRIVILEGE_DENIED',
      };
    }
    return { action, argument, ...(await this.readFile(argument)) };
  }

  async readFile(requested: string): Promise<Omit<KnowledgeResult, 'action' | 'argument'>> {
    const relative = inside(requested);
    if (relative === undefined) return { status: 'refused', message: 'is outside the workspace', reason_code: 'KNOWLEDGE_PATH_ESCAPE' };
    const denied = deniedReason(relative);
    if (denied) return { status: 'refused', message: denied, reason_code: 'KNOWLEDGE_DENIED' };
    const content = this.files.get(relative);
    if (content === undefined) return { status: 'error', message: 'not found', path: relative, reason_code: 'KNOWLEDGE_NOT_FOUND' };
    const bytes = Buffer.byteLength(content);
    const limit = this.options.maxFileBytes ?? Number.POSITIVE_INFINITY;
    const truncated = bytes > limit;
    return {
      status: 'provided',
      message: `${bytes} bytes`,
      path: relative,
      bytes,
      sha256: this.options.sha256?.(content) ?? 'f'.repeat(64),
      truncated,
      content: truncated ? `${Buffer.from(content).subarray(0, limit).toString('utf8')}\n[… truncated]` : content,
      reason_code: 'KNOWLEDGE_PROVIDED',
    };
  }

  async check(relativePath: string, protect: readonly string[] = []): Promise<OutputPathCheck> {
    const relative = inside(relativePath);
    if (relative === undefined) return { ok: false, reason: 'is outside the workspace' };
    const reserved = outputDeniedReason(relative);
    if (reserved) return { ok: false, reason: reserved };
    if (protect.some((p) => inside(p) === relative))
      return { ok: false, reason: `is one of the command's own input artifacts ("${relative}")` };
    return { ok: true, absolute: `/workspace/${relative}`, relative };
  }

  /** The same rule as the workspace's writer (artifact-place.ts), over the artifacts written here and the files given. */
  async place(relativePath: string, runId: string, suffixes: readonly string[] = []): Promise<ArtifactPlacement> {
    const held = (p: string): string | undefined => this.artifacts.get(p) ?? this.files.get(p);
    const there = held(relativePath);
    if (there !== undefined && artifactRunId(there) === runId) return { path: relativePath };
    const beside = suffixes.map((s) => `${artifactBase(relativePath)}${s}`).find((p) => held(p) !== undefined);
    if (there === undefined && beside === undefined) return { path: relativePath };
    const taken =
      there === undefined
        ? { path: beside as string, by: 'a file already there' }
        : { path: relativePath, by: describeOwner(artifactRunId(there)) };
    return { path: artifactPathBeside(relativePath, runId), taken };
  }

  async write(relativePath: string, content: string, protect?: readonly string[]): Promise<string> {
    const checked = await this.check(relativePath, protect);
    if (!checked.ok) throw new Error(`refusing to write the artifact at "${relativePath}": ${checked.reason}`);
    this.artifacts.set(checked.relative, content);
    return checked.absolute;
  }
}

/** A workspace-relative path with forward slashes, or undefined when it leaves the workspace. */
function inside(requested: string): string | undefined {
  if (requested.length === 0 || path.posix.isAbsolute(requested) || /^[A-Za-z]:/.test(requested)) return undefined;
  const normal = path.posix.normalize(requested.replaceAll('\\', '/'));
  return normal === '..' || normal.startsWith('../') ? undefined : normal;
}
