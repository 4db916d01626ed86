import { z } from 'zod';
import data from './categories.json' with { type: 'json' };

/**
 * Every kind of sensitive content the detector recognises (`categories.json`, data, checked here at
 * load). The order is the precedence used when two findings of the same length overlap: earlier
 * wins. Credentials come first (most specific prefixes before looser ones), then personal data.
 */

/** A kind of sensitive content; UPPER_SNAKE so it reads well inside `[REDACTED:<CATEGORY>]`. */
export type SensitiveCategory = keyof typeof data.categories;

const CATEGORIES: Readonly<Record<SensitiveCategory, { secret: boolean; name: string }>> = z
  .record(z.string().regex(/^[A-Z][A-Z0-9_]*$/), z.strictObject({ secret: z.boolean(), name: z.string().min(1) }))
  .parse(data.categories) as typeof data.categories;

export const SENSITIVE_CATEGORIES = Object.keys(data.categories) as readonly SensitiveCategory[];

/** True when `label` is one of the detector's categories (a scanner may report its own). */
export function isSensitiveCategory(label: string): label is SensitiveCategory {
  return Object.hasOwn(CATEGORIES, label);
}

/**
 * True for credentials (keys, tokens, passwords: anything that grants access), false for personal
 * data (PII: e-mail, phone, IP address, card, IBAN, SSN).
 */
export function isSecretCategory(category: SensitiveCategory): boolean {
  return CATEGORIES[category].secret;
}

/** What a category is, for people ("an AWS secret key"): how a stop or a pause says what was found, never the value. */
export function categoryName(category: SensitiveCategory): string {
  return CATEGORIES[category].name;
}

/** Precedence rank of a category (lower wins a tie); see SENSITIVE_CATEGORIES. */
export function categoryRank(category: SensitiveCategory): number {
  return SENSITIVE_CATEGORIES.indexOf(category);
}

/** Category labels in the detector's order; any other label (a scanner's own, `DEEP_NESTING`) after them, sorted. */
export function orderedCategories(found: Iterable<string>): string[] {
  const labels = new Set(found);
  const known = SENSITIVE_CATEGORIES.filter((c) => labels.has(c));
  const other = [...labels].filter((c) => !isSensitiveCategory(c)).sort();
  return [...known, ...other];
}
