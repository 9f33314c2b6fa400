// Public API of the core_v1 market engine: pure, deterministic functions of (seed, market, tick).

export {
  catalog,
  FAMILIES,
  familyByCluster,
  GRADES,
  ADDONS,
  type CatalogResponse,
  type Family,
} from './catalog.js';
export {
  MARKETS,
  MARKET_IDS,
  PRICING_MODEL,
  isMarketId,
  marketSpec,
  type MarketId,
  type MarketSpec,
} from './markets.js';
export { menu, menuSize, dealAt, dealKey, parseDealKey, type ParsedKey } from './menu.js';
export { dealOutcomeInputs, outcomeInputsMemo, surchargeRangeCents } from './demand.js';
export {
  familyTicks,
  familyTick,
  rankingFields,
  rateFromRank,
  type FamilyTick,
  type RankingFields,
} from './latent.js';
export {
  openPosition,
  stepPosition,
  settlePosition,
  simulatePosition,
  profitCurve,
  pnlSoFarCents,
  costBasisCents,
  surchargeCents,
  type PositionTerms,
  type PositionState,
  type RegimeTerms,
  type SettledPosition,
  type SimulateInput,
  type ProfitCurve,
} from './accounting.js';
export {
  positionTerms,
  regimeTerms,
  settleDeal,
  dealProfitCurve,
  dealMarketPath,
  sessionRows,
  sessionRow,
  type MarketPath,
  type SessionRow,
} from './outcome.js';
export {
  calibrate,
  pearson,
  type CalibrationFigures,
  type CalibrationReport,
} from './calibration.js';
export { houseDecision, type HouseDecision, type HouseInput } from './policy.js';
export { ENGINE_IDENTITY, ENGINE_NAME, ENGINE_VERSION, engineIdentity } from './identity.js';
export { centsToNumber, numberToCents, fractionOfCents } from './money.js';
export { dealToJson, type ServedDeal } from './json.js';
export { keyedStream, Stream, type Key } from './rng.js';
export {
  isVelocityDeal,
  type Deal,
  type VelocityDeal,
  type RankingDeal,
  type Bundle,
  type BundleItem,
  type OutcomeInputs,
} from './types.js';
