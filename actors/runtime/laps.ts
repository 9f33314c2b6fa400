// Where a long turn's time goes: the milliseconds between successive marks, by step name, for the
// close's log line and its benchmark (bench/close.mjs). A name marked twice adds up.
export type LapTimes = Record<string, number>;

export class Laps {
  private last = performance.now();
  readonly ms: LapTimes = {};

  /** The time since the previous mark (or the start) is step `name`'s. */
  mark(name: string): void {
    const now = performance.now();
    this.ms[name] = Math.round(((this.ms[name] ?? 0) + now - this.last) * 10) / 10;
    this.last = now;
  }
}
