/**
 * An OTLP endpoint may not carry a user or password (`http://user:pass@host`): fetch refuses such a
 * URL outright, so it could never deliver a span, and the URL would be printed with its password in
 * every notice that names the endpoint. The credentials belong in `OTEL_EXPORTER_OTLP_HEADERS`.
 */
export const OTLP_CREDENTIALS_REFUSED =
  'must not hold a user name or password (the password is not shown): fetch cannot send to such a URL; give the endpoint without them and put the credentials in OTEL_EXPORTER_OTLP_HEADERS, e.g. authorization=Basic%20<base64 of user:password>';

/** Whether a URL names a user or a password before its host; false for a URL that does not parse. */
export function hasUrlCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== '' || parsed.password !== '';
  } catch {
    return false;
  }
}
