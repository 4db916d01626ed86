import { z } from 'zod';
import type { FloorVerdict } from './floor.js';
import { FloorReading } from './reading.js';

/** The floor as a run keeps it (checkpoint, `show`, `show --json`): what it read, what it found, what let it through. */
export const FloorRecord = z.object({
  reading: FloorReading,
  proceeds: z.boolean(),
  findings: z.array(
    z.object({
      gate: z.enum(['meaning', 'rfl', 'ethics', 'acc']),
      risk: z.string().optional(),
      says: z.string(),
      accepted: z.string().optional(),
    }),
  ),
  /** The workspace's acceptances that let the run through (`floor.accept`), as `risk` or `risk for kinds`. */
  accepted_by: z.array(z.string()),
});
export type FloorRecord = z.infer<typeof FloorRecord>;

export function floorRecord(reading: FloorReading, verdict: FloorVerdict): FloorRecord {
  return {
    reading,
    proceeds: verdict.proceeds,
    findings: verdict.findings.map((f) => ({
      gate: f.gate,
      ...(f.risk ? { risk: f.risk } : {}),
      says: f.says,
      ...(f.accepted ? { accepted: f.accepted } : {}),
    })),
    accepted_by: [...verdict.acceptedBy],
  };
}
