// Rendered HTML fragments (or whole pages' bytes) of pages whose data changes only when a session
// closes: the open session's menu, the record's closed sessions. The caller keys a fragment by
// everything it depends on (market, the record's open tick, the validated query), so a close simply
// stops the old keys from being asked; the cache is bounded in entries and size (characters or
// bytes) and drops the least recently used first. Concurrent requests for a fragment being computed
// share the computation (single flight); a failed computation is not kept.
import { HTML, type Reply } from '../http/route.js';

type Entry<T> = { value: T | Promise<T>; size: number };

export class FragmentCache<T extends string | Uint8Array = string> {
  private readonly entries = new Map<string, Entry<T>>();
  private chars = 0;

  constructor(
    readonly maxEntries: number,
    /** Most characters (or bytes) held: the fragments' total length; one fragment above it is never kept. */
    readonly maxChars: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Characters held now. */
  get held(): number {
    return this.chars;
  }

  /**
   * The fragment of `key`, computed by `compute` when absent. `keep: false` computes without
   * keeping (data that may still change between closes, e.g. while history loads).
   */
  get(key: string, compute: () => T, keep?: boolean): T;
  get(key: string, compute: () => Promise<T>, keep?: boolean): Promise<T>;
  get(key: string, compute: () => T | Promise<T>, keep = true): T | Promise<T> {
    const hit = this.entries.get(key);
    if (hit) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value;
    }
    const value = compute();
    if (!keep) return value;
    if (!(value instanceof Promise)) {
      this.store(key, { value, size: value.length });
      return value;
    }
    const entry: Entry<T> = { value, size: 0 };
    this.store(key, entry);
    value.then(
      (text) => {
        if (this.entries.get(key) !== entry) return;
        entry.value = text;
        entry.size = text.length;
        this.chars += text.length;
        this.trim();
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return value;
  }

  private store(key: string, entry: Entry<T>): void {
    this.entries.set(key, entry);
    this.chars += entry.size;
    this.trim();
  }

  private trim(): void {
    for (const [k, e] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.chars <= this.maxChars) return;
      this.entries.delete(k);
      this.chars -= e.size;
    }
  }
}

/**
 * A page for a visitor who is not logged in is the same bytes for everyone: kept whole under `key`
 * (which must name everything the page shows); a logged-in holder's page (their name in the
 * layout) is rendered each time.
 */
export function visitorPage(
  pages: FragmentCache<Uint8Array>,
  key: string,
  loggedIn: boolean,
  render: () => Reply,
  keep = true,
): Reply {
  if (loggedIn) return render();
  const body = pages.get(
    key,
    () => {
      const r = render();
      return typeof r.body === 'string' ? Buffer.from(r.body) : (r.body as Uint8Array);
    },
    keep,
  );
  return { body, contentType: HTML };
}
