/**
 * Every kind of sensitive content the detector recognises.
 *
 * The order is the precedence used when two findings of the same length overlap: earlier wins.
 * Credentials come first (most specific prefixes before looser ones), then personal data.
 */
/** Credentials first (most specific prefixes before looser ones): anything that grants access. */
const SECRETS = [
  'PRIVATE_KEY',
  'JWT',
  'URL_PASSWORD',
  'API_KEY_ANTHROPIC',
  'API_KEY_OPENAI',
  'AWS_ACCESS_KEY',
  'AWS_SECRET_KEY',
  'GITHUB_TOKEN',
  'GITLAB_TOKEN',
  'SLACK_TOKEN',
  'SLACK_WEBHOOK',
  'STRIPE_KEY',
  'GOOGLE_API_KEY',
  'BEARER_TOKEN',
  'BASIC_AUTH',
  'PASSWORD_ASSIGNMENT',
] as const;

/** Personal data. */
const PERSONAL = ['CARD', 'IBAN', 'SSN', 'EMAIL', 'PHONE', 'IPV6', 'IPV4'] as const;

export const SENSITIVE_CATEGORIES = [...SECRETS, ...PERSONAL] as const;

/** A kind of sensitive content; UPPER_SNAKE so it reads well inside `[REDACTED:<CATEGORY>]`. */
export type SensitiveCategory = (typeof SENSITIVE_CATEGORIES)[number];

const SECRET_CATEGORIES: ReadonlySet<SensitiveCategory> = new Set<SensitiveCategory>(SECRETS);

/**
 * True for credentials (keys, tokens, passwords: anything that grants access), false for personal
 * data (PII: e-mail, phone, IP address, card, IBAN, SSN).
 */
export function isSecretCategory(category: SensitiveCategory): boolean {
  return SECRET_CATEGORIES.has(category);
}

/** Precedence rank of a category (lower wins a tie); see SENSITIVE_CATEGORIES. */
export function categoryRank(category: SensitiveCategory): number {
  return SENSITIVE_CATEGORIES.indexOf(category);
}
