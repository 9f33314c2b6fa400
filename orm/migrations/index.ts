// Every schema change, in order. Listed explicitly (not globbed) so the compiled service and the
// TypeScript tests run the same list; never auto-sync the schema in a production path.
import { Migration20261122000001 } from './Migration20261122000001.js';
import { Migration20261122000002 } from './Migration20261122000002.js';
import { Migration20261122000003 } from './Migration20261122000003.js';
import { Migration20261122000004 } from './Migration20261122000004.js';
import { Migration20261122000005 } from './Migration20261122000005.js';
import { Migration20261122000006 } from './Migration20261122000006.js';
import { Migration20261122000007 } from './Migration20261122000007.js';
import { Migration20261122000008 } from './Migration20261122000008.js';
import { Migration20261122000009 } from './Migration20261122000009.js';
import { Migration20261122000010 } from './Migration20261122000010.js';
import { Migration20261122000011 } from './Migration20261122000011.js';
import { Migration20261122000012 } from './Migration20261122000012.js';
import { Migration20261122000013 } from './Migration20261122000013.js';
import { Migration20261122000014 } from './Migration20261122000014.js';
import { Migration20261122000015 } from './Migration20261122000015.js';
import { Migration20261122000016 } from './Migration20261122000016.js';
import { Migration20261122000017 } from './Migration20261122000017.js';
import { Migration20261122000018 } from './Migration20261122000018.js';
import { Migration20261122000019 } from './Migration20261122000019.js';
import { Migration20261122000020 } from './Migration20261122000020.js';
import { Migration20261122000021 } from './Migration20261122000021.js';
import { Migration20261122000022 } from './Migration20261122000022.js';
import { Migration20261122000023 } from './Migration20261122000023.js';
import { Migration20261122000024 } from './Migration20261122000024.js';

export const migrationsList = [
  { name: 'Migration20261122000001_backbone', class: Migration20261122000001 },
  { name: 'Migration20261122000002_record', class: Migration20261122000002 },
  { name: 'Migration20261122000003_trading', class: Migration20261122000003 },
  { name: 'Migration20261122000004_idempotency', class: Migration20261122000004 },
  { name: 'Migration20261122000005_close_quarantine', class: Migration20261122000005 },
  { name: 'Migration20261122000006_rate_limit', class: Migration20261122000006 },
  { name: 'Migration20261122000007_history_load', class: Migration20261122000007 },
  { name: 'Migration20261122000008_carts', class: Migration20261122000008 },
  { name: 'Migration20261122000009_holder_money', class: Migration20261122000009 },
  { name: 'Migration20261122000010_exchange_competition_kinds', class: Migration20261122000010 },
  { name: 'Migration20261122000011_exchange', class: Migration20261122000011 },
  { name: 'Migration20261122000012_competitions', class: Migration20261122000012 },
  { name: 'Migration20261122000013_close_writes', class: Migration20261122000013 },
  { name: 'Migration20261122000014_competition_goods', class: Migration20261122000014 },
  { name: 'Migration20261122000015_events', class: Migration20261122000015 },
  { name: 'Migration20261122000016_webhooks', class: Migration20261122000016 },
  { name: 'Migration20261122000017_limits_receipts', class: Migration20261122000017 },
  { name: 'Migration20261122000018_event_append', class: Migration20261122000018 },
  { name: 'Migration20261122000019_position_event_figures', class: Migration20261122000019 },
  { name: 'Migration20261122000020_one_clock', class: Migration20261122000020 },
  { name: 'Migration20261122000021_webhook_health', class: Migration20261122000021 },
  { name: 'Migration20261122000022_withdrawn_orders', class: Migration20261122000022 },
  { name: 'Migration20261122000023_budgets_that_end', class: Migration20261122000023 },
  { name: 'Migration20261122000024_authority_that_ends', class: Migration20261122000024 },
];
