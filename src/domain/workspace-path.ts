import { z } from 'zod';
import { detectSensitive } from './sensitive/detector.js';

/** A workspace-relative path as a command file gives it (where it may point is checked when the run starts). */
export const workspacePath = z
  .string()
  .trim()
  .min(1, 'must be a non-empty workspace-relative path')
  .max(1024, 'must be at most 1024 characters')
  .refine((p) => !p.includes('\0'), 'must not contain NUL bytes');

/**
 * The artifact's path is printed (the outcome, the watcher's lines, `--json`) and kept (the
 * checkpoint, the audit log), and everything maestro prints or keeps is screened: a path holding an
 * e-mail address or a secret would be shown as `[REDACTED:…]`, a path no one could open. So such a
 * path is refused before the run, naming only the category found.
 */
export const outputArtifactPath = workspacePath.superRefine((p, ctx) => {
  const found = [...new Set(detectSensitive(p).map((f) => f.category))];
  if (found.length > 0)
    ctx.addIssue({
      code: 'custom',
      message: `must not hold personal data or a secret (found: ${found.join(', ')}): the artifact's path is printed and kept, and would be shown as [REDACTED:…]; name the file without it`,
    });
});
