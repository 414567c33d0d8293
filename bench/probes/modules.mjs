// Bench-only preload, loaded before any contender's preload: counts the modules Node's loader
// loads (CJS require, ESM import, require(esm)) through a synchronous module hook, which sees both
// module systems. The hello apps print the count next to their RSS via globalThis.__benchModules.
import { registerHooks } from 'node:module';

const files = new Set();
const builtins = new Set();

registerHooks({
  load(url, context, nextLoad) {
    if (url.startsWith('node:')) builtins.add(url);
    else files.add(url);
    return nextLoad(url, context);
  },
});

globalThis.__benchModules = () => `modules=${files.size} builtins=${builtins.size}`;
