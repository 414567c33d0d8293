/**
 * A real forward proxy in a process of its own (forward-proxy.ts), for the tests of uploads
 * through HTTP_PROXY / HTTPS_PROXY: what went through it is read off its stdout, one line per
 * proxied request or tunnel, and waited on as those lines come, never by sleeping.
 *
 *   const proxy = await startProxy({ hosts: { 'pyroscope.internal': '127.0.0.1' } });
 *   ... HTTP_PROXY: proxy.url ...
 *   await proxy.waitFor(() => proxy.proxied.some((p) => p.target.endsWith('/ingest')));
 *   await proxy.close();
 */
import path from 'node:path';
import { basicCredential } from '../../src/util/basic-auth.js';
import { type Child, repoRoot, runNode } from './child.js';
import type { ProxiedLine } from './forward-proxy.js';
import { Waiter } from './waiter.js';

export type { ProxiedLine };

export interface ProxyOptions {
  /** Names the proxy resolves (to addresses), and nobody else does. */
  hosts?: Record<string, string>;
  /** Credentials the proxy requires (Proxy-Authorization: Basic); none when absent. */
  auth?: { user: string; password: string };
}

export interface ForwardProxy {
  /** `http://127.0.0.1:<port>`, without credentials. */
  readonly url: string;
  readonly port: number;
  /** Every request and tunnel it handled, in order, each stamped with when its line arrived. */
  readonly proxied: readonly (ProxiedLine & { at: number })[];
  waitFor<T>(check: () => T, options?: { timeoutMs?: number; description?: string }): Promise<Exclude<T, false | 0 | '' | null | undefined>>;
  readonly child: Child;
  close(): Promise<void>;
}

const PROGRAM = path.join(repoRoot, 'dist/test/support/forward-proxy.js');
const LINE = /^proxied (.*)$/;

export async function startProxy(options: ProxyOptions = {}): Promise<ForwardProxy> {
  const { auth } = options;
  const child = runNode([PROGRAM], {
    env: {
      FORWARD_PROXY_HOSTS: JSON.stringify(options.hosts ?? {}),
      FORWARD_PROXY_AUTH: auth && `Basic ${basicCredential(auth.user, auth.password)}`,
    },
  });
  const port = Number((await child.line(/^listening (\d+)$/m, 10_000))[1]);
  const proxied: (ProxiedLine & { at: number })[] = [];
  const waiter = new Waiter(
    () => `proxied:\n${proxied.map((p) => `  ${p.kind} ${p.method} ${p.target} → ${p.status}`).join('\n') || '  nothing'}\nproxy stderr: ${child.stderr}`,
  );
  let partial = '';
  child.process.stdout!.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const match = LINE.exec(line);
      if (match) proxied.push({ ...(JSON.parse(match[1]!) as ProxiedLine), at: Date.now() });
    }
    waiter.notify();
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    proxied,
    waitFor: (check, waitOptions) => waiter.waitFor(check, waitOptions),
    child,
    close: async () => {
      waiter.close(new Error('proxy closed while waiting'));
      child.process.kill();
      await child.exit(10_000);
    },
  };
}
