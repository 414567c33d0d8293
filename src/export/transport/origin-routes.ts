import type { Dispatcher } from 'undici';

/**
 * A dispatcher that hands each request to the dispatcher its origin takes (`route`, called per
 * request: it caches what it needs), and closes or destroys them all (`all`) as one. Used for the
 * proxies (proxy-agent.ts proxyRoutes) and for origins with TLS material of their own (dispatcher.ts).
 */
export function routeByOrigin(Base: typeof Dispatcher, route: (origin: string) => Dispatcher, all: () => Dispatcher[]): Dispatcher {
  class OriginRoutes extends Base {
    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      return route(String(options.origin)).dispatch(options, handler);
    }
    override close(): Promise<void>;
    override close(callback: () => void): void;
    override close(callback?: () => void): Promise<void> | void {
      const closed = Promise.all(all().map((d) => d.close())).then(() => undefined);
      if (callback === undefined) return closed;
      void closed.then(callback);
    }
    override destroy(): Promise<void>;
    override destroy(error: Error | null): Promise<void>;
    override destroy(callback: () => void): void;
    override destroy(error: Error | null, callback: () => void): void;
    override destroy(first?: Error | null | (() => void), second?: () => void): Promise<void> | void {
      const error = typeof first === 'function' ? null : (first ?? null);
      const callback = typeof first === 'function' ? first : second;
      const destroyed = Promise.all(all().map((d) => d.destroy(error))).then(() => undefined);
      if (callback === undefined) return destroyed;
      void destroyed.then(callback);
    }
  }
  return new OriginRoutes();
}
