// A closed-loop HTTP load in the runner's process (on the load core) for workloads where each
// request must have its own path, which wrk cannot give without a script. Bounded in requests
// and in time.

/** Sends GET `baseUrl + pathOf(i)` for i < total with `concurrency` in flight; every answer must be 200. */
export async function load(baseUrl, pathOf, total, concurrency, deadlineMs = 120_000) {
  const stopAt = Date.now() + deadlineMs;
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < total) {
      if (Date.now() > stopAt) throw new Error(`load did not finish within ${deadlineMs} ms (${done}/${total})`);
      const path = pathOf(next++);
      const response = await fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(30_000) });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
      done++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  return done;
}
