// The one clock (ARCHITECTURE rule 7). Service time runs `scale` times faster than real time from
// an anchor: t_service = anchor_service + scale * (t_real - anchor_real). With scale 1 and
// anchor_service = anchor_real this is plain unix time; CONTRACT.md's formula is the case where
// both anchors are the first start. Everything that needs "now" gets a Clock injected; tests
// drive a clock whose real time they set.

export type Anchor = { real: number; service: number; scale: number };

export class Clock {
  constructor(
    readonly anchor: Anchor,
    /** Real unix time in milliseconds. */
    private readonly realMs: () => number = Date.now,
  ) {}

  get scale(): number {
    return this.anchor.scale;
  }

  /** Real unix seconds (fractional). */
  realNow(): number {
    return this.realMs() / 1000;
  }

  /** Service unix seconds (fractional). */
  serviceNow(): number {
    return this.toService(this.realNow());
  }

  toService(real: number): number {
    return this.anchor.service + this.anchor.scale * (real - this.anchor.real);
  }

  toReal(service: number): number {
    return this.anchor.real + (service - this.anchor.service) / this.anchor.scale;
  }

  /** The session open now on a market with this interval. */
  tick(intervalSeconds: number): number {
    return Math.floor(this.serviceNow() / intervalSeconds);
  }

  /** When session `tick` ends, in real unix seconds. */
  closesAt(tick: number, intervalSeconds: number): number {
    return this.toReal((tick + 1) * intervalSeconds);
  }
}

/**
 * The anchor to use at start-up given the stored one. A first start anchors at now. A restart with
 * the same scale keeps the stored anchor, so ticks continue; a restart with another scale
 * re-anchors at the current service time, so service time never jumps or runs backwards.
 */
export function resolveAnchor(stored: Anchor | null, scale: number, realNow: number): Anchor {
  if (!stored) return { real: realNow, service: realNow, scale };
  if (stored.scale === scale) return stored;
  const service = stored.service + stored.scale * (realNow - stored.real);
  return { real: realNow, service, scale };
}
