// The numeric options of the scripts outside bench/run.mjs (`--rounds N`, `--seconds S`).

/** `--name N` from `argv` as an integer ≥ 1, `fallback` when absent; a bad value throws `usage`. */
export function countOption(argv, name, fallback, usage) {
  const i = argv.indexOf(name);
  const value = i === -1 ? fallback : Number(argv[i + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`usage: ${usage}`);
  return value;
}
