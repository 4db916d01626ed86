import { redactSensitive } from './sensitive/detector.js';

/** A text as maestro may keep or print it: every finding of the detector as `[REDACTED:<CATEGORY>]` (see screen.ts). */
export function screenText(text: string): string {
  return redactSensitive(text).text;
}

/**
 * A value for display, every string in it screened (object keys included), the shape kept: for views
 * assembled from many places (file names, checkpoints, the engine's rows), so no text in them is
 * printed unscreened because one source was missed.
 */
export function screenStrings<T>(value: T): T {
  if (typeof value === 'string') return screenText(value) as T;
  if (Array.isArray(value)) return value.map((v) => screenStrings(v)) as T;
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [screenText(k), screenStrings(v)])) as T;
  }
  return value;
}
