// A holder's settled fill written straight into the record, as the close of its session would
// write it (tests of the record's trade answers: actor filter, account_id).
import type { EntityManager } from '@mikro-orm/postgresql';
import { instantSql } from '../../actors/runtime/sql.js';
import {
  dealMarketPath,
  dealOutcomeInputs,
  menu,
  settleDeal,
  MARKETS,
  type MarketId,
} from '../../src/engine/index.js';

const arr = (xs: number[] | null) => (xs ? `{${xs.join(',')}}` : null);

/**
 * Menu row `idx` of session `tick` filled for `account` at `qty`, settled at `at` (unix seconds: the
 * test service's clock, as the close stamps its trades); returns the trade id.
 */
export async function holderTrade(
  em: EntityManager,
  seed: number,
  m: MarketId,
  tick: number,
  idx: number,
  qty: number,
  account: number,
  at: number,
): Promise<number> {
  const deal = menu(seed, m, tick)[idx];
  const s = settleDeal(m, deal, dealOutcomeInputs(seed, m, tick, idx), qty);
  const path = MARKETS[m].quotes_velocity ? null : dealMarketPath(seed, m, deal);
  const fees = MARKETS[m].fees;
  const [row] = await em.execute(
    `insert into trade (market, tick, idx, offer_key, cluster, actor, account_id, position_id, qty, unit_cost_cents, list_price_cents,
       fee_cents, holding_cents, cost_basis_cents, horizon, revealed_ticks, sales_by_tick, units_sold, qty_left, revenue_cents,
       holding_cost_cents, settled, sold_out, regime, surcharge_cents, writeoff_cents, realized_pnl_cents, price_by_tick_cents, nsellers_by_tick, settled_at, created_at)
     values (?, ?, ?, ?, ?, 'user', ?, ?, ?, ?, ?, ?, ?, ?, 8, 8, ?::int[], ?, ?, ?, ?, true, ?, ?, ?, ?, ?, ?::int[], ?::int[], ${instantSql()}, ${instantSql()})
     returning id::float8 as id`,
    [
      m,
      tick,
      idx,
      deal.key,
      deal.cluster,
      account,
      account * 10,
      qty,
      deal.unit_cost_cents,
      deal.list_price_cents,
      fees.fulfilment_per_unit_cents,
      fees.holding_per_unit_session_cents,
      s.cost_basis_cents,
      arr(s.sales_by_tick),
      s.units_sold,
      s.qty_left,
      s.revenue_cents,
      s.holding_cost_cents,
      s.sold_out,
      s.regime,
      s.surcharge_cents,
      s.writeoff_cents,
      s.realized_pnl_cents,
      arr(path?.price_by_tick_cents ?? null),
      arr(path?.nsellers_by_tick ?? null),
      at,
      at,
    ],
  );
  return row.id;
}
