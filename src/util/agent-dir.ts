import { fileURLToPath } from 'node:url';

/**
 * The agent's dist folder (this file is dist/src/util/agent-dir.js; the bundles keep each module's
 * own import.meta.url): a recording names it so its report can tell the agent's frames from the
 * app's.
 */
export const AGENT_DIR = fileURLToPath(new URL('../../', import.meta.url));
