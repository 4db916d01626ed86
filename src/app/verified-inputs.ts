import type { InputReader } from '../domain/ports.js';
import type { KnowledgeResult } from '../domain/run-state.js';

/** What the intake saw of each input artifact: its sha256, or `missing:<reason code>`. */
export type InputHashes = Readonly<Record<string, string>>;

/** The intake's view of one input, as `InputHashes` keeps it. */
export function inputFingerprint(result: Omit<KnowledgeResult, 'action' | 'argument'>): string {
  return result.status === 'provided' && result.sha256 ? result.sha256 : `missing:${result.reason_code}`;
}

/** Fingerprints every input artifact of a command through the sandboxed reader. */
export async function fingerprintInputs(paths: readonly string[], inputs: InputReader): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const p of paths) out[p] = inputFingerprint(await inputs.readFile(p));
  return out;
}

/**
 * A worker reads the command's inputs from its own copy of the knowledge roots. A copy that differs
 * from what the intake saw (another content hash) is not served: the consistency gate then pauses
 * the run before any model call, naming the file and both hashes, so a person can sync the copies and
 * continue (whichever worker resumes checks its own copy again).
 */
export class VerifiedInputReader implements InputReader {
  constructor(
    private readonly inner: InputReader,
    private readonly expected: InputHashes,
  ) {}

  async readFile(relativePath: string): Promise<Omit<KnowledgeResult, 'action' | 'argument'>> {
    const result = await this.inner.readFile(relativePath);
    const want = this.expected[relativePath];
    if (want === undefined || want.startsWith('missing:')) return result;
    const have = inputFingerprint(result);
    if (have === want) return result;
    const theirs = have.startsWith('missing:')
      ? `it is missing here (${result.message})`
      : `this worker's copy has sha256 ${have.slice(0, 12)}…`;
    return {
      status: 'error',
      message: `differs from the intake's copy: the intake read sha256 ${want.slice(0, 12)}…, ${theirs}; give this worker the same knowledge roots, then continue`,
      path: relativePath,
      reason_code: 'INPUT_COPY_DIFFERS',
    };
  }
}
