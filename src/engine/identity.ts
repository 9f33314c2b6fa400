// The frozen identity of the engine: name, version and a hash over every parameter (catalog,
// market table, latent dynamics, house policy). Any parameter change changes params_hash, which
// coverage reports, so a record is never silently mixed across engines. node:crypto is pure
// computation here (no I/O).

import { createHash } from 'node:crypto';
import { ADDONS, FAMILIES, GRADE_VALUE } from './catalog.js';
import { MARKETS } from './markets.js';
import { HOUSE, DYNAMICS, LISTING, REGIME, WINDOW } from './params.js';

export const ENGINE_NAME = 'core_v1';
export const ENGINE_VERSION = '1.0.0';

/** JSON with object keys sorted, so the hash does not depend on declaration order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export const ENGINE_PARAMETERS = Object.freeze({
  families: FAMILIES,
  addons: ADDONS,
  grade_value: GRADE_VALUE,
  markets: MARKETS,
  dynamics: DYNAMICS,
  listing: LISTING,
  regime: REGIME,
  desk: HOUSE, // served key (the engine's identity, hashed): SPEC.md calls the house the desk
  window: WINDOW,
});

export const ENGINE_IDENTITY = Object.freeze({
  name: ENGINE_NAME,
  version: ENGINE_VERSION,
  params_hash: createHash('sha256').update(canonical(ENGINE_PARAMETERS)).digest('hex'),
});

/** The identity plus the seed, as coverage reports it frozen. */
export function engineIdentity(seed: number): {
  name: string;
  version: string;
  params_hash: string;
  seed: number;
} {
  return { ...ENGINE_IDENTITY, seed };
}
