/** Sends `total` GETs with `concurrency` in flight; every response must be 200. Returns the paths sent. */
export async function load(baseUrl: string, paths: (i: number) => string, total: number, concurrency: number): Promise<string[]> {
  const sent: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const path = paths(next++);
      sent.push(path);
      const response = await fetch(`${baseUrl}${path}`);
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return sent;
}
