import type { RunLedger } from '../../src/domain/ports.js';

/** A ledger as it is, calling `onFinished` as a run's `finished` commit is made (before it is written). */
export function finishedCommitsNoted(ledger: RunLedger, onFinished: () => void): RunLedger {
  return {
    ...ledger,
    open: async (id: string) => {
      const run = await ledger.open(id);
      const commit = run.commit.bind(run);
      return Object.assign(run, {
        commit: async (c: Parameters<typeof commit>[0]) => {
          if (c.event?.type === 'finished') onFinished();
          return commit(c);
        },
      });
    },
    load: ledger.load.bind(ledger),
    list: ledger.list.bind(ledger),
    readFile: ledger.readFile.bind(ledger),
  };
}
