// Reading the service's /metrics in tests: one series' value from the Prometheus text format.

/** The value of `series` (its name and labels exactly as printed, e.g. `x_total{result="ok"}`), or NaN. */
export function metricValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
}
