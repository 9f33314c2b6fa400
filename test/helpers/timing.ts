// Where a test file's time goes (test/README.md "Where the time goes"): the helpers time their
// costly steps (databases, service starts, browsers, child processes) into a registry that
// test/loader/register.mjs writes out at exit. Concurrent steps add up (time spent in, not wall).
type Phase = { ms: number; n: number };
const registry = ((globalThis as Record<symbol, unknown>)[
  Symbol.for('agent-market.test-timing')
] ??= { phases: {} }) as { phases: Record<string, Phase> };

export async function timed<T>(phase: string, step: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await step();
  } finally {
    const p = (registry.phases[phase] ??= { ms: 0, n: 0 });
    p.ms += Math.round(performance.now() - started); // wall-clock: reported, not asserted
    p.n++;
  }
}
