/**
 * A forward HTTP proxy, run as a process of its own by proxy-server.ts (no proxy binary can be
 * installed here): absolute-form requests (`POST http://host:port/path`) are forwarded, `CONNECT
 * host:port` opens a tunnel (https:// backends). Host names are resolved from its own table only
 * (FORWARD_PROXY_HOSTS, JSON name → address), so a backend named there is reachable through the
 * proxy and nowhere else; IP literals are reached as they are. With FORWARD_PROXY_AUTH set, a
 * request must carry exactly that Proxy-Authorization value, or it is answered 407.
 *
 * Prints `listening <port>`, then one line per proxied request or tunnel, as soon as its outcome
 * is known and before the client learns it: `proxied {"kind":"request"|"tunnel","method":…,"target":…,"status":…,"credential":…}`.
 * `credential` says whether a Proxy-Authorization came, never its value.
 */
import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import { type Socket, connect, isIP } from 'node:net';

const hosts = JSON.parse(process.env.FORWARD_PROXY_HOSTS ?? '{}') as Record<string, string>;
const requiredAuth = process.env.FORWARD_PROXY_AUTH;

/** Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own credentials: not passed on. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export interface ProxiedLine {
  kind: 'request' | 'tunnel';
  method: string;
  target: string;
  status: number;
  credential: boolean;
}

function log(line: ProxiedLine): void {
  process.stdout.write(`proxied ${JSON.stringify(line)}\n`);
}

function addressOf(host: string): string | undefined {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return isIP(bare) !== 0 ? bare : hosts[bare.toLowerCase()];
}

/** Whether the request may pass: no credentials needed, or exactly the right ones. */
function authorized(headers: IncomingHttpHeaders): boolean {
  return requiredAuth === undefined || headers['proxy-authorization'] === requiredAuth;
}

const PROXY_AUTHENTICATE = 'Basic realm="forward-proxy"';

function forward(req: IncomingMessage, res: ServerResponse): void {
  const credential = req.headers['proxy-authorization'] !== undefined;
  const done = (target: string, status: number) => log({ kind: 'request', method: req.method ?? '', target, status, credential });
  const answer = (target: string, status: number, text: string, headers: Record<string, string> = {}) => {
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(`forward-proxy: ${text}\n`);
    done(target, status);
  };
  let url: URL;
  try {
    url = new URL(req.url ?? '');
  } catch {
    answer(req.url ?? '', 400, 'not an absolute-form request');
    return;
  }
  if (url.protocol !== 'http:') {
    answer(url.href, 400, `cannot forward ${url.protocol}`);
    return;
  }
  if (!authorized(req.headers)) {
    answer(url.href, 407, 'proxy authentication required', { 'proxy-authenticate': PROXY_AUTHENTICATE });
    return;
  }
  const address = addressOf(url.hostname);
  if (address === undefined) {
    answer(url.href, 502, `unknown host ${url.hostname}`);
    return;
  }
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(name)) headers[name] = value;
  const upstream = request({ host: address, port: url.port || 80, method: req.method, path: `${url.pathname}${url.search}`, headers }, (reply) => {
    // Logged before the client has the answer: once it has, the line is out.
    done(url.href, reply.statusCode ?? 502);
    res.writeHead(reply.statusCode ?? 502, reply.headers);
    reply.pipe(res);
  });
  upstream.on('error', (error) => {
    if (res.headersSent) res.destroy();
    else answer(url.href, 502, error.message);
  });
  req.pipe(upstream);
}

function tunnel(req: IncomingMessage, client: Socket, head: Buffer): void {
  const target = req.url ?? '';
  const credential = req.headers['proxy-authorization'] !== undefined;
  const refuse = (status: number, reason: string, extra = '') => {
    client.end(`HTTP/1.1 ${status} ${reason}\r\n${extra}content-length: 0\r\n\r\n`);
    log({ kind: 'tunnel', method: 'CONNECT', target, status, credential });
  };
  client.on('error', () => undefined);
  if (!authorized(req.headers)) {
    refuse(407, 'Proxy Authentication Required', `proxy-authenticate: ${PROXY_AUTHENTICATE}\r\n`);
    return;
  }
  const at = target.lastIndexOf(':');
  const address = at > 0 ? addressOf(target.slice(0, at)) : undefined;
  if (address === undefined) {
    refuse(502, 'Bad Gateway');
    return;
  }
  let established = false;
  const upstream = connect(Number(target.slice(at + 1)), address, () => {
    established = true;
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    log({ kind: 'tunnel', method: 'CONNECT', target, status: 200, credential });
    upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  upstream.on('error', () => (established ? client.destroy() : refuse(502, 'Bad Gateway')));
  client.on('close', () => upstream.destroy());
}

const server = createServer(forward);
server.on('connect', tunnel);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
});
