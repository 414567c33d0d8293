/**
 * Scrubs credentials from text we print: the values of secret settings, `user:password@` in
 * URLs, and Authorization-style header values. Used by the logger, so no message needs to
 * remember to do it.
 */
const MASK = '[redacted]';
/** Userinfo runs to the last `@` of the authority: a password may contain `@` itself. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s]*@/gi;
/** The whole value, whatever the scheme (Bearer, Basic, Token, Digest, ApiKey …). */
const AUTH_HEADER = /\b(authorization|proxy-authorization|x-api-key)(["']?\s*[:=]\s*["']?)[^\r\n"',;]+/gi;

export function createRedactor(secrets: Iterable<string | undefined>): (text: string) => string {
  // Longest first, so a secret that contains another is masked whole.
  const values = [...new Set([...secrets].filter((s): s is string => typeof s === 'string' && s.length >= 4))].sort((a, b) => b.length - a.length);
  return (text: string) => {
    let out = text;
    for (const value of values) out = out.split(value).join(MASK);
    return out.replace(URL_USERINFO, `$1${MASK}@`).replace(AUTH_HEADER, `$1$2${MASK}`);
  };
}
