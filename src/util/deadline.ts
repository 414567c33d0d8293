/** Resolves when `work` settles or the deadline passes, whichever is first; never rejects. */
export function untilDeadline(work: Promise<unknown>, deadlineAt: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, deadlineAt - Date.now()));
    timer.unref();
    work
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        clearTimeout(timer);
        resolve();
      });
  });
}
