/** The credential of HTTP Basic auth (RFC 7617): base64 of `user:password`, as sent after `Basic `. */
export function basicCredential(user: string, password: string): string {
  return Buffer.from(`${user}:${password}`).toString('base64');
}

/** `user` and `password` of a URL's userinfo, decoded (`https://user:p%40ss@host`); undefined when it has none or is no URL. */
export function urlCredentials(url: string | undefined): { user: string; password: string } | undefined {
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.username === '' && parsed.password === '') return undefined;
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  return { user: decode(parsed.username), password: decode(parsed.password) };
}
