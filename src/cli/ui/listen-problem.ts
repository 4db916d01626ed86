import { ExitError } from '../../domain/errors.js';

/**
 * Why the console could not listen, in one line that names the address and what to do: the
 * environment's problem (exit 1, README "Exit codes"), never an internal error with a stack.
 */
export function listenProblem(error: unknown, host: string, port: number): ExitError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const line = (() => {
    switch (code) {
      case 'EADDRINUSE':
        return `${where} is already in use (another program listens there): choose another --port, or --port 0 for any free one`;
      case 'EADDRNOTAVAIL':
        return `cannot listen on ${host}: no interface of this machine has that address; give --host one of its own addresses (127.0.0.1 for this machine only)`;
      case 'EACCES':
        return `not allowed to listen on ${where} (EACCES: a port below 1024 needs privileges): choose another --port, or --port 0 for any free one`;
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `cannot listen on ${host}: the name does not resolve to an address of this machine (${code}); give --host an address such as 127.0.0.1`;
      default:
        return `cannot listen on ${where} (${code ?? (error instanceof Error ? error.message : String(error))})`;
    }
  })();
  return new ExitError(1, `maestro ui: ${line}`);
}
