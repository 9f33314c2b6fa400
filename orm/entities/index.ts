// Every table the migrations create, as an EntitySchema (no decorators, no reflection: the compiled
// workers load them with nothing but the driver). One file per area; each entity names the actor
// that owns (writes) its table. test/api/orm-schema.test.ts keeps them equal to the migrations.
import { cartEntities } from './carts.js';
import { competitionEntities } from './competitions.js';
import { eventEntities } from './events.js';
import { exchangeEntities } from './exchange.js';
import { moneyEntities } from './money.js';
import { recordEntities } from './record.js';
import { serviceEntities } from './service.js';
import { tradingEntities } from './trading.js';
import { webhookEntities } from './webhooks.js';

export * from './record.js';
export * from './service.js';
export * from './trading.js';
export * from './carts.js';
export * from './money.js';
export * from './competitions.js';
export * from './exchange.js';
export * from './events.js';
export * from './webhooks.js';

export const entities = [
  ...serviceEntities,
  ...recordEntities,
  ...tradingEntities,
  ...cartEntities,
  ...moneyEntities,
  ...exchangeEntities,
  ...competitionEntities,
  ...eventEntities,
  ...webhookEntities,
];
