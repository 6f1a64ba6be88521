// Waits on a condition with a deadline instead of sleeping: tests synchronise on state, not time.
export async function waitFor<T>(
  probe: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  // Generous: a deadline, not a delay, so a loaded CI machine does not turn into flakes.
  const timeoutMs = opts.timeoutMs ?? 30_000;
  // Every test shares two cores with the operator it runs: poll gently; a test that must catch a
  // short-lived state asks for a shorter interval itself.
  const intervalMs = opts.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false && value !== null) return value as T;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const what = opts.what ?? "condition";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: lastError });
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
