/** proper-lockfile's table of the locks this process holds (exported by the module, untyped by @types). */
declare module 'proper-lockfile/lib/lockfile.js' {
  /** Keyed by resolved path; `mtime` is the one the library last gave the lock folder. */
  export function getLocks(): Record<string, { mtime: Date } | undefined>;
}
