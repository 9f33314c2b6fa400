// The served objects' schemas, declared once, the one source: the routes
// declare them as their answers, the server checks replies against them (SVC_RESPONSE_CHECKS), the
// OpenAPI document carries them, and TypeScript types derive from them with Static<>. Neutral and
// pure: src/http and actors/ may both import it.
import type { TSchema } from 'typebox';
import { Problem, ValidationIssue } from './common.js';
import { Deal, MarketStatus } from './market.js';
import { HistoryRow, Trade } from './record.js';
import { TapeRow } from './analytics.js';
import { Order } from './order.js';
import { Position } from './position.js';
import { InventoryItem, LedgerEntry, Round } from './account.js';

export * from './common.js';
export * from './market.js';
export * from './record.js';
export * from './analytics.js';
export * from './order.js';
export * from './position.js';
export * from './account.js';
export * from './agent.js';
export * from './discovery.js';
export * from './web.js';
export * from './cart.js';
export * from './exchange.js';
export * from './competition.js';
export * from './events.js';
export * from './webhooks.js';

/** Resources the OpenAPI document names under components/schemas (and refers to wherever they occur). */
export const NAMED_SCHEMAS: Record<string, TSchema> = {
  Problem,
  ValidationIssue,
  MarketStatus,
  Deal,
  Trade,
  HistoryRow,
  TapeRow,
  Order,
  Position,
  LedgerEntry,
  Round,
  InventoryItem,
};
export * from './quote.js';
