import { redactSensitive } from './sensitive/detector.js';

/** A text as maestro may keep or print it: every finding of the detector as `[REDACTED:<CATEGORY>]` (see screen.ts). */
export function screenText(text: string): string {
  return redactSensitive(text).text;
}
