import { realFs, type DurableFs } from '../../src/adapters/fs/atomic-file.js';

/** What a test does to the real file system's calls (each optional). */
export interface FsFaults {
  /** Before a write to `file`: a number caps the bytes written (0: none, as a full disk takes none); an Error is thrown instead. */
  readonly write?: (file: string) => number | Error | undefined;
  /** Before a flush (sync or datasync) of `file`; throw to make it fail. */
  readonly flush?: (file: string) => void;
  /** Before `file`'s handle is closed. */
  readonly close?: (file: string) => void;
}

/** A full disk's error. */
export function noSpace(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device (simulated)'), { code: 'ENOSPC' });
}

/** The real file system (node:fs/promises) with `faults` injected into the handles it opens. */
export function faultyFs(faults: FsFaults): DurableFs {
  return {
    ...realFs,
    open: async (file, flags, mode) => {
      const handle = await realFs.open(file, flags, mode);
      return {
        write: async (buffer, offset, length, position) => {
          const fault = faults.write?.(file);
          if (fault instanceof Error) throw fault;
          return handle.write(buffer, offset, fault === undefined ? length : Math.min(length, fault), position);
        },
        sync: async () => {
          faults.flush?.(file);
          await handle.sync();
        },
        datasync: async () => {
          faults.flush?.(file);
          await (handle.datasync ? handle.datasync() : handle.sync());
        },
        truncate: async (length) => handle.truncate?.(length),
        close: async () => {
          faults.close?.(file);
          await handle.close();
        },
      };
    },
  };
}
