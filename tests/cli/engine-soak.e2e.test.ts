import { describe, expect, it } from 'vitest';
import { runSoak } from '../../bench/pg-cluster.mjs';
import { cliHere, useEngine } from '../helpers/engine.js';

// A file of its own, so it runs beside the other engine tests. The suite's size is small; a soak
// runs it bigger (the 300 commands, 20 kills): MAESTRO_SOAK_COMMANDS=300 MAESTRO_SOAK_KILLS=20.
const COMMANDS = Number(process.env.MAESTRO_SOAK_COMMANDS ?? 12);
const KILLS = Number(process.env.MAESTRO_SOAK_KILLS ?? 2);

const { database, workspace } = useEngine();

describe('workers on one engine, killed mid-run', () => {
  it(`soak: 3 workers, ${COMMANDS} commands, ${KILLS} kill -9 mid-run — nothing lost, nothing done twice, every chain verifies`, async () => {
    const url = await database();
    const result = await runSoak({ url, commands: COMMANDS, workers: 3, kills: KILLS, run: cliHere });
    workspace(result.ws);
    expect(result.kills).toBe(KILLS);
    expect(result).toMatchObject({
      lost: 0,
      runTwice: 0,
      repeatedSteps: 0,
      completed: COMMANDS,
      outputs: COMMANDS,
      auditVerified: true,
      notCompleted: [],
    });
    expect(result.resumedRuns).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
