/**
 * Scrubs credentials from text we print: the values of secret settings (also as they look
 * URL-encoded, and without their `Bearer`/`Basic` scheme), `user:password@` in URLs, query
 * parameters that carry credentials (`?token=…`, `&api_key=…`, `X-Amz-Signature=…`), and
 * Authorization-style header values. Used by the logger, so no message needs to remember to do it.
 * Pure: the same text and secrets always give the same output, nothing is read or kept.
 */
const MASK = '[redacted]';
/** Userinfo runs to the last `@` of the authority: a password may contain `@` itself. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s]*@/gi;
/** The whole value, whatever the scheme (Bearer, Basic, Token, Digest, ApiKey …). */
const AUTH_HEADER = /\b(authorization|proxy-authorization|x-api-key)(["']?\s*[:=]\s*["']?)[^\r\n"',;]+/gi;
/**
 * A query (or fragment) parameter whose name says it holds a credential: token, access_token,
 * api_key, apikey, key, password, pwd, secret, client_secret, auth, sig, signature, credential,
 * session, jwt … anywhere in the name. Broad on purpose: masking a harmless parameter costs a log
 * reader little; missing a secret one leaks it.
 */
const SECRET_PARAM = /([?&#;][^=&#\s]*?(?:token|key|passw|pwd|secret|auth|sig|credential|session|jwt)[^=&#\s]*=)[^&#\s"'<>]+/gi;
/** A header value with its scheme: the credential alone may be echoed back, e.g. in an error body. */
const SCHEMED = /^(?:bearer|basic|token|apikey|digest)\s+(\S.*)$/i;
/** Shorter values are not masked: they would match all over ordinary text. */
const MIN_SECRET_LENGTH = 4;

/** The ways a secret value can show up in text: as given, URL-encoded (both flavours), decoded, and without its scheme. */
function forms(secret: string): string[] {
  const out = [secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)];
  try {
    out.push(decodeURIComponent(secret));
  } catch {
    // Not percent-encoded text: nothing to decode.
  }
  const credential = SCHEMED.exec(secret)?.[1];
  if (credential !== undefined) out.push(credential);
  return out;
}

export function createRedactor(secrets: Iterable<string | undefined>): (text: string) => string {
  const given = [...secrets].filter((s): s is string => typeof s === 'string');
  // Longest first, so a secret that contains another is masked whole.
  const values = [...new Set(given.flatMap(forms))].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  return (text: string) => {
    let out = text;
    for (const value of values) out = out.split(value).join(MASK);
    return out.replace(URL_USERINFO, `$1${MASK}@`).replace(AUTH_HEADER, `$1$2${MASK}`).replace(SECRET_PARAM, `$1${MASK}`);
  };
}
