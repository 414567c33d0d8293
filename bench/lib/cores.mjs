// With two cores: the app under test alone on one, everything that loads or receives (the runner,
// wrk, the sink) on the other, so the load generator never steals the app's CPU.
export const APP_CORE = 0;
export const LOAD_CORE = 1;
