// The record's settled sessions in memory (ARCHITECTURE rule 5: results for closed sessions never
// change and may be cached): per series (messages.ts FragmentSpec) and session, the bytes of that
// session's part of an answer, immutable once the session is settled and recorded. Bounded by an
// explicit byte cap, least recently used first out (ByteLru); anything evicted is rebuilt from the
// database.
import type { FragmentSpec, SessionFragment } from '../../actors/record/messages.js';

export type Fragment = Readonly<{
  tick: number;
  recorded: boolean;
  bytes: Buffer;
  /** sha1 of `bytes`, base64: stands for them in an answer's ETag. */
  digest: string;
  items: number;
  /** trades: each trade's actor (h/u) and byte offsets (see SessionFragment.starts). */
  actors?: string;
  starts?: Uint32Array;
  /** trades: how many are the house's. */
  houses?: number;
}>;

/** Bookkeeping per entry beyond its bytes (node, key, map slots), counted against the cap. */
const ENTRY_OVERHEAD = 160;

/** A series' cache key: every field of its spec, in a fixed order. */
export function seriesKey(spec: FragmentSpec): string {
  switch (spec.kind) {
    case 'history':
      return `history|${spec.market}|${+spec.includeBundle}${+spec.oracle}`;
    case 'trades':
      return `trades|${spec.market}`;
    case 'tape':
      return `tape|${spec.market}|${spec.cluster}`;
    case 'stats':
      return `stats|${spec.market}|${+spec.oracle}`;
    case 'dataset':
      return `dataset|${spec.market}|${spec.split}|${+spec.expandQty}`;
  }
}

/**
 * Bytes of our own: a small Buffer.from() is a slice of a shared 8 KB slab, which a kept slice
 * would pin whole (and the cap would not see).
 */
function ownBytes(text: string): Buffer {
  const b = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  b.write(text);
  return b;
}

/** A worker's fragment as the front end keeps and serves it. */
export function fromReply(f: SessionFragment): Fragment {
  const out: Fragment = {
    tick: f.tick,
    recorded: f.recorded,
    bytes: ownBytes(f.text),
    digest: f.digest,
    items: f.items,
  };
  if (f.actors === undefined || f.starts === undefined) return Object.freeze(out);
  let houses = 0;
  for (let i = 0; i < f.actors.length; i++) if (f.actors.charCodeAt(i) === 104 /* h */) houses++;
  return Object.freeze({ ...out, actors: f.actors, starts: Uint32Array.from(f.starts), houses });
}

/** What a fragment costs the cap. */
export const fragmentSize = (f: Fragment) =>
  f.bytes.length +
  (f.starts?.byteLength ?? 0) +
  (f.actors?.length ?? 0) +
  f.digest.length +
  ENTRY_OVERHEAD;

type Node<V> = {
  key: string;
  series: Map<number, Node<V>>;
  tick: number;
  value: V;
  size: number;
  prev: Node<V> | null;
  next: Node<V> | null;
};

export type CacheStats = {
  entries: number;
  bytes: number;
  capBytes: number;
  hits: number;
  misses: number;
  stored: number;
  evicted: number;
};

/** Values by (key, tick) under a byte cap, least recently used out first. */
export class ByteLru<V> {
  private readonly series = new Map<string, Map<number, Node<V>>>();
  /** Least recently used at `oldest`, most recently at `newest`. */
  private oldest: Node<V> | null = null;
  private newest: Node<V> | null = null;
  private entries = 0;
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private stored = 0;
  private evicted = 0;

  constructor(
    readonly capBytes: number,
    private readonly sizeOf: (v: V) => number,
  ) {}

  get(key: string, tick: number): V | undefined {
    const node = this.series.get(key)?.get(tick);
    if (!node) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    if (node !== this.newest) {
      this.unlink(node);
      this.append(node);
    }
    return node.value;
  }

  /** Keeps `value`; the least recently used go while over the cap (a value larger than the cap is not kept). */
  set(key: string, tick: number, value: V): void {
    const size = this.sizeOf(value);
    if (size > this.capBytes) return;
    const old = this.series.get(key)?.get(tick);
    if (old) this.remove(old);
    let series = this.series.get(key);
    if (!series) this.series.set(key, (series = new Map()));
    const node: Node<V> = { key, series, tick, value, size, prev: null, next: null };
    series.set(tick, node);
    this.append(node);
    this.entries++;
    this.bytes += size;
    this.stored++;
    while (this.bytes > this.capBytes && this.oldest) {
      this.remove(this.oldest);
      this.evicted++;
    }
  }

  stats(): CacheStats {
    return {
      entries: this.entries,
      bytes: this.bytes,
      capBytes: this.capBytes,
      hits: this.hits,
      misses: this.misses,
      stored: this.stored,
      evicted: this.evicted,
    };
  }

  private remove(node: Node<V>): void {
    this.unlink(node);
    node.series.delete(node.tick);
    if (node.series.size === 0) this.series.delete(node.key);
    this.entries--;
    this.bytes -= node.size;
  }

  private unlink(node: Node<V>): void {
    if (node.prev) node.prev.next = node.next;
    else this.oldest = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.newest = node.prev;
    node.prev = node.next = null;
  }

  private append(node: Node<V>): void {
    node.prev = this.newest;
    node.next = null;
    if (this.newest) this.newest.next = node;
    else this.oldest = node;
    this.newest = node;
  }
}
