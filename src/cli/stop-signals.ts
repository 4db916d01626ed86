/** The part of a process that stop signals need (tests hand in a fake). */
export type SignalProcess = Pick<NodeJS.Process, 'on' | 'off' | 'kill' | 'pid'>;

/**
 * SIGINT/SIGTERM: the first one asks for a clean stop (`onFirst`); a second one leaves at once by
 * re-raising the signal with its default action. Returns a function that removes the handlers.
 */
export function handleStopSignals(proc: SignalProcess, hooks: { onFirst: () => void; beforeExit: () => void }): () => void {
  let received = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    received += 1;
    if (received === 1) {
      hooks.onFirst();
      return;
    }
    // Whatever was running stays claimed in .maestro/inflight/; the next start recovers it.
    hooks.beforeExit();
    dispose();
    proc.kill(proc.pid, signal);
  };
  const dispose = (): void => {
    proc.off('SIGINT', onSignal);
    proc.off('SIGTERM', onSignal);
  };
  proc.on('SIGINT', onSignal);
  proc.on('SIGTERM', onSignal);
  return dispose;
}
