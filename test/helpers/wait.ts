/** Waits until `predicate` holds, polling; never a fixed sleep. Throws after `timeout` ms. */
export async function waitFor(
  predicate: () => Promise<boolean> | boolean,
  { timeout = 10_000, interval = 50 }: { timeout?: number; interval?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
