import { z } from 'zod';

/** Orders strings by UTF-16 code units: independent of locale, so snapshots are byte-stable. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A set's members as a sorted array, for deterministic snapshots. */
export function sortedMembers(values: Iterable<string>): string[] {
  return [...values].sort(compareCodeUnits);
}

/** A persisted set: non-empty strings, each at most once (order is not checked on read). */
export const StringSet = z.array(z.string().min(1)).refine((xs) => new Set(xs).size === xs.length, 'must not repeat an entry');
