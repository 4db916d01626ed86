import path from 'node:path';

/** Where everything lives inside a workspace folder. */
export class WorkspacePaths {
  readonly root: string;
  constructor(root: string) {
    this.root = path.resolve(root);
  }
  get config(): string {
    return path.join(this.root, 'maestro.config.json');
  }
  get personas(): string {
    return path.join(this.root, 'personas');
  }
  get commands(): string {
    return path.join(this.root, 'commands');
  }
  get sessionStates(): string {
    return path.join(this.root, 'session_states');
  }
  get state(): string {
    return path.join(this.root, '.maestro');
  }
  get inflight(): string {
    return path.join(this.state, 'inflight');
  }
  get rejected(): string {
    return path.join(this.state, 'rejected');
  }
  get runs(): string {
    return path.join(this.state, 'runs');
  }
  get decisions(): string {
    return path.join(this.state, 'decisions');
  }
  get audit(): string {
    return path.join(this.state, 'audit');
  }
  runDir(runId: string): string {
    return path.join(this.runs, runId);
  }
  auditLog(runId: string): string {
    return path.join(this.audit, `${runId}.jsonl`);
  }
  /** The audit log's head: last acknowledged seq and hash (see domain/audit-chain.ts). */
  auditHead(runId: string): string {
    return path.join(this.audit, `${runId}.head`);
  }
  /** A path relative to the workspace root, with forward slashes, for messages. */
  relative(absolute: string): string {
    return path.relative(this.root, absolute).split(path.sep).join('/');
  }
}
