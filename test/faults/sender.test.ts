/**
 * The HttpSender against servers that misbehave in ways a whole-app test cannot aim at precisely:
 * requests in flight when the queue overflows or the process drains, one pipeline dead while the
 * other is fine, replies that never end or break off after a 2xx, huge binary error bodies, and
 * credentials in the URL. Each case names what it guards against; every one of them failed
 * before its fix (CHANGELOG.md, "Fixed").
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { test } from 'node:test';
import { HttpSender } from '../../src/export/transport/http-sender.js';
import type { Outgoing } from '../../src/export/transport/outgoing.js';
import { Logger } from '../../src/log.js';

interface Seen {
  what: string;
  url: string;
  authorization: string | undefined;
}

/** A loopback server that records each request (tagged by x-what) and answers with `answer`. */
async function server(
  answer: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void,
): Promise<{ url: string; seen: Seen[]; arrived: (n: number) => Promise<void>; arrivedWhat: (what: string) => Promise<void>; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const waiters: { n: number; what?: string; resolve: () => void }[] = [];
  const srv: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const entry = { what: String(req.headers['x-what']), url: req.url ?? '', authorization: req.headers.authorization };
      seen.push(entry);
      answer(req, res, entry);
      for (const w of [...waiters]) if (w.what === undefined ? seen.length >= w.n : seen.some((x) => x.what === w.what)) w.resolve();
    });
  });
  srv.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    seen,
    arrived: (n) =>
      new Promise<void>((resolve, reject) => {
        if (seen.length >= n) return resolve();
        const timer = setTimeout(() => reject(new Error(`only ${seen.length} of ${n} requests arrived: ${seen.map((s) => s.what).join(' ')}`)), 10_000);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
      }),
    arrivedWhat: (what) =>
      new Promise<void>((resolve, reject) => {
        if (seen.some((x) => x.what === what)) return resolve();
        const timer = setTimeout(() => reject(new Error(`${what} did not arrive: ${seen.map((s) => s.what).join(' ')}`)), 10_000);
        waiters.push({ n: 0, what, resolve: () => (clearTimeout(timer), resolve()) });
      }),
    close: async () => {
      for (const s of sockets) s.destroy();
      srv.close();
      await once(srv, 'close');
    },
  };
}

function outgoing(base: string, what: string, kind: Outgoing['kind'] = 'profiles', path = '/ingest'): Outgoing {
  return { kind, url: `${base}${path}`, headers: { 'x-what': what, 'content-type': 'application/octet-stream' }, body: new Uint8Array(64), what };
}

function sender(options: { timeoutMs?: number; maxQueued?: number } = {}): { sender: HttpSender; lines: string[] } {
  const lines: string[] = [];
  const log = new Logger(
    'warn',
    (t) => t,
    (line) => void lines.push(line),
  );
  return {
    sender: new HttpSender({ timeoutMs: options.timeoutMs ?? 5000, maxQueued: options.maxQueued ?? 32, log, baseBackoffMs: 50, maxBackoffMs: 200 }),
    lines,
  };
}

/** Sends `whats` through a fresh sender, waits until each reached `srv` and the sender is idle. */
async function sendAndSettle(
  srv: { url: string; arrived: (n: number) => Promise<void> },
  whats: string[],
  options: Parameters<typeof sender>[0],
): Promise<ReturnType<typeof sender>> {
  const made = sender(options);
  for (const what of whats) made.sender.enqueue(outgoing(srv.url, what));
  await srv.arrived(whats.length);
  await made.sender.idle(5000);
  return made;
}

test('drain() hands back the request in flight once: the final flush must not upload it twice', async () => {
  const hung = await server(() => undefined);
  try {
    const { sender: s } = sender();
    s.enqueue(outgoing(hung.url, 'r0'));
    s.enqueue(outgoing(hung.url, 'r1'));
    await hung.arrived(1);
    assert.deepEqual(
      s.drain().map((r) => r.what),
      ['r0', 'r1'],
    );
  } finally {
    await hung.close();
  }
});

test('a full queue drops the oldest waiting request, never the one in flight, and loses none silently', async () => {
  const held: ServerResponse[] = [];
  const srv = await server((_, res) => void held.push(res));
  try {
    const { sender: s, lines } = sender({ maxQueued: 2 });
    s.enqueue(outgoing(srv.url, 'r0'));
    await srv.arrived(1);
    for (const what of ['r1', 'r2', 'r3', 'r4']) s.enqueue(outgoing(srv.url, what));
    // From now on answer at once, and release r0.
    const release = () => {
      for (const res of held.splice(0)) res.end('ok');
    };
    release();
    const timer = setInterval(release, 10);
    await s.idle(10_000);
    clearInterval(timer);
    assert.deepEqual(
      srv.seen.map((x) => x.what),
      ['r0', 'r3', 'r4'],
      'r1 and r2 were the oldest waiting',
    );
    assert.equal(s.stats.dropped, 2);
    assert.equal(s.stats.sent, 3);
    assert.equal(lines.filter((l) => l.includes('queue is full')).length, 1, lines.join(''));
  } finally {
    await srv.close();
  }
});

test('after a recovery, a new overflow is reported again', async () => {
  let failing = true;
  const srv = await server((_, res) => {
    res.writeHead(failing ? 503 : 200);
    res.end();
  });
  try {
    const { sender: s, lines } = sender({ maxQueued: 1 });
    const overflow = async (first: number) => {
      s.enqueue(outgoing(srv.url, `r${first}`));
      await srv.arrived(srv.seen.length + 1); // r<first> is failing at the head
      s.enqueue(outgoing(srv.url, `r${first + 1}`));
      s.enqueue(outgoing(srv.url, `r${first + 2}`)); // pushes r<first+1> out
    };
    await overflow(0);
    failing = false;
    await srv.arrivedWhat('r2'); // r0 went through, then r2: recovered
    failing = true;
    await overflow(3);
    assert.equal(lines.filter((l) => l.includes('queue is full')).length, 2, lines.join(''));
    s.drain();
  } finally {
    await srv.close();
  }
});

test('a dead Pyroscope does not hold spans back (and the other way round)', async () => {
  const hung = await server(() => undefined);
  const good = await server((_, res) => res.end('ok'));
  try {
    const { sender: s, lines } = sender({ timeoutMs: 5000 });
    s.enqueue(outgoing(hung.url, 'p0', 'profiles'));
    await hung.arrived(1);
    const t0 = Date.now();
    s.enqueue(outgoing(good.url, 's0', 'spans', '/v1/traces'));
    await good.arrived(1);
    assert.ok(Date.now() - t0 < 2000, `the span batch waited ${Date.now() - t0} ms behind a hung profile upload`);
    assert.deepEqual(lines, []);
    s.drain();
  } finally {
    await hung.close();
    await good.close();
  }
});

test('a 2xx whose body never ends is delivered and does not wedge the pipeline', async () => {
  const timers = new Set<NodeJS.Timeout>();
  const srv = await server((_, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    // One byte every 100 ms, forever: the idle timeouts never fire.
    const timer = setInterval(() => res.write('.'), 100);
    timers.add(timer);
    res.on('close', () => clearInterval(timer));
  });
  try {
    const { sender: s, lines } = await sendAndSettle(srv, ['r0', 'r1'], { timeoutMs: 1000 });
    assert.deepEqual(
      srv.seen.map((x) => x.what),
      ['r0', 'r1'],
      'each sent once',
    );
    assert.equal(s.stats.sent, 2);
    assert.deepEqual(lines, []);
  } finally {
    for (const timer of timers) clearInterval(timer);
    await srv.close();
  }
});

test('after a 2xx the status line is the answer: a body trickled forever holds neither the pipeline nor the connection', async () => {
  const timers = new Set<NodeJS.Timeout>();
  let closed = 0;
  let allClosed: () => void;
  const everyReplyClosed = new Promise<void>((resolve) => (allClosed = resolve));
  const srv = await server((_, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => res.write('.'), 100);
    timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      if (++closed === 5) allClosed();
    });
  });
  try {
    // With a 60 s upload timeout, waiting for each body would take minutes; arrived() gives 10 s.
    const { sender: s, lines } = await sendAndSettle(srv, ['r0', 'r1', 'r2', 'r3', 'r4'], { timeoutMs: 60_000 });
    assert.deepEqual(
      srv.seen.map((x) => x.what),
      ['r0', 'r1', 'r2', 'r3', 'r4'],
      'each sent once, one after the other',
    );
    assert.equal(s.stats.sent, 5);
    assert.deepEqual(lines, []);
    await everyReplyClosed;
  } finally {
    for (const timer of timers) clearInterval(timer);
    await srv.close();
  }
});

test('a 2xx that breaks off mid-body counts as delivered: it is not sent again', async () => {
  const srv = await server((req, res) => {
    res.writeHead(200, { 'content-length': '1000' });
    res.write('x'.repeat(100), () => req.socket.destroy());
  });
  try {
    const { sender: s, lines } = await sendAndSettle(srv, ['r0', 'r1'], { timeoutMs: 1000 });
    assert.deepEqual(
      srv.seen.map((x) => x.what),
      ['r0', 'r1'],
    );
    assert.equal(s.stats.failedAttempts, 0);
    assert.deepEqual(lines, []);
  } finally {
    await srv.close();
  }
});

test('a huge binary error body is read boundedly and makes one clean warning line', async () => {
  const garbage = Buffer.alloc(5 << 20);
  for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919) % 256;
  // Two failures (one warning, then a quiet retry), then success.
  const srv = await server((_, res) => {
    if (srv.seen.length <= 2) {
      res.writeHead(503);
      res.end(garbage);
    } else res.end('ok');
  });
  try {
    const { sender: s, lines } = sender({ timeoutMs: 2000 });
    s.enqueue(outgoing(srv.url, 'r0'));
    await srv.arrived(3);
    await s.idle(5000);
    assert.equal(s.stats.sent, 1);
    assert.equal(lines.length, 1, lines.join(''));
    const line = lines[0]!;
    assert.match(line, /profiles upload failed \(http:\/\/127\.0\.0\.1:\d+\/ingest answered 503: /);
    assert.ok(line.length < 400, `one short line, not the body: ${line.length} chars`);
    assert.doesNotMatch(line.trimEnd(), /[\u0000-\u001f\u007f]/, 'no control characters reach the terminal');
  } finally {
    await srv.close();
  }
});

test('credentials in the URL become Basic auth, and no warning prints them', async () => {
  const srv = await server((_, res) => {
    const failing = srv.seen.length <= 2;
    res.writeHead(failing ? 503 : 200);
    res.end(failing ? 'try later' : 'ok');
  });
  try {
    const { sender: s, lines } = sender({ timeoutMs: 2000 });
    const withCredentials = srv.url.replace('http://', 'http://user:p%40ss-SECRET-77@');
    s.enqueue(outgoing(withCredentials, 'r0'));
    await srv.arrived(3);
    await s.idle(5000);
    assert.equal(s.stats.sent, 1);
    for (const x of srv.seen) {
      assert.equal(x.authorization, `Basic ${Buffer.from('user:p@ss-SECRET-77').toString('base64')}`);
      assert.equal(x.url, '/ingest');
    }
    assert.equal(lines.length, 1);
    assert.ok(lines[0]!.includes(`${srv.url}/ingest`), lines[0]);
    assert.ok(!/SECRET|p%40ss|user:/.test(lines.join('')), lines.join(''));
  } finally {
    await srv.close();
  }
});

test('an explicit Authorization header wins over URL credentials', async () => {
  const srv = await server((_, res) => res.end('ok'));
  try {
    const { sender: s } = sender();
    const request = outgoing(srv.url.replace('http://', 'http://user:pw@'), 'r0');
    request.headers.authorization = 'Bearer tok';
    s.enqueue(request);
    await s.idle(5000);
    assert.equal(srv.seen[0]?.authorization, 'Bearer tok');
  } finally {
    await srv.close();
  }
});

/** `what` whose primary form goes to /primary and whose fallback goes to /fallback. */
function withFallback(base: string, what: string): Outgoing {
  return {
    ...outgoing(base, what, 'profiles', '/primary'),
    fallback: { request: outgoing(base, what, 'profiles', '/fallback'), note: 'using the fallback form from now on' },
  };
}

test('a request refused with 400 goes again in its fallback form; once that is taken, the pipeline sends only fallback forms', async () => {
  const srv = await server((req, res) => {
    res.statusCode = req.url === '/primary' ? 400 : 200;
    res.end(req.url === '/primary' ? 'duplicate label name' : '');
  });
  try {
    const { sender: s, lines } = sender();
    s.enqueue(withFallback(srv.url, 'r0'));
    await srv.arrived(2);
    await s.idle(5000);
    for (const what of ['r1', 'r2']) s.enqueue(withFallback(srv.url, what));
    await srv.arrived(4);
    await s.idle(5000);
    assert.deepEqual(
      srv.seen.map((x) => `${x.what} ${x.url}`),
      ['r0 /primary', 'r0 /fallback', 'r1 /fallback', 'r2 /fallback'],
    );
    assert.deepEqual({ sent: s.stats.sent, dropped: s.stats.dropped }, { sent: 3, dropped: 0 });
    assert.deepEqual(
      lines.map((l) => l.trim()),
      ['pyro-run: warning: using the fallback form from now on'],
      'the note once, no rejection warning',
    );
    s.enqueue(withFallback(srv.url, 'r3'));
    assert.deepEqual(
      s.drain().map((r) => r.url.slice(srv.url.length)),
      ['/fallback'],
      'the final flush sends the form the server takes',
    );
    assert.equal(s.sendable(withFallback(srv.url, 'r4')).url, `${srv.url}/fallback`);
  } finally {
    await srv.close();
  }
});

test('a fallback form the server refuses as well is not adopted: the request is dropped with the first refusal named', async () => {
  const srv = await server((req, res) => {
    res.statusCode = 400;
    res.end(req.url === '/primary' ? 'bad primary' : 'bad fallback');
  });
  try {
    const { sender: s, lines } = sender();
    s.enqueue(withFallback(srv.url, 'r0'));
    s.enqueue(withFallback(srv.url, 'r1'));
    await srv.arrived(4);
    await s.idle(5000);
    assert.deepEqual(
      srv.seen.map((x) => `${x.what} ${x.url}`),
      ['r0 /primary', 'r0 /fallback', 'r1 /primary', 'r1 /fallback'],
    );
    assert.equal(s.stats.dropped, 2);
    assert.equal(lines.length, 1, lines.join(''));
    assert.match(lines[0]!, /profiles upload rejected \(.* answered 400: bad primary\); dropping r0/);
  } finally {
    await srv.close();
  }
});
