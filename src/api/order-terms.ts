// What POST /orders checks before its account actor's turn, and a quote too (one definition): the
// deal is on the current menu of its market and its session is still open (404, CONTRACT.md
// "Session boundary"), and the quantity is within the deal's max_qty (422, never clamped).
import { MARKETS, positionTerms, type Deal, type MarketId } from '../engine/index.js';
import { HttpError } from '../http/route.js';
import type { Services } from '../http/services.js';
import { menuSnapshots } from '../market-data/live-session.js';
import type { MenuSnapshot } from '../market-data/snapshots.js';
import { dealNotOnMenu, orderAmounts, type OrderAmounts } from '../rules.js';
import { marketOr404 } from './market-params.js';

export type MenuDeal = {
  market: MarketId;
  snap: MenuSnapshot;
  deal: Deal;
  idx: number;
  /** The instant the order is accepted (its created_at, never after closes_at). */
  at: number;
};

/** The deal `offerKey` of `market`'s current menu while its session is open, or 404. */
export function menuDealOr404(s: Services, market: string, offerKey: string): MenuDeal {
  const id = marketOr404(market);
  const snap = menuSnapshots(s).get(id);
  const row = snap.rows.get(offerKey);
  const at = s.clock.realNow();
  // Past tick_closes_at the deal is gone, even while its close runs.
  if (!row || at >= snap.closesAt) {
    throw new HttpError(
      404,
      dealNotOnMenu(
        s.config.baseUrl,
        id,
        offerKey,
        `is not on the current menu of ${id} (session ${snap.tick})`,
      ),
    );
  }
  return { market: id, snap, deal: row.deal, idx: row.idx, at };
}

/** The 422 of a quantity above the deal's max_qty, or null. */
export function qtyRefusal(deal: Deal, qty: number): HttpError | null {
  if (qty <= deal.max_qty) return null;
  return new HttpError(422, [
    {
      loc: ['body', 'qty'],
      msg: `Input should be less than or equal to ${deal.max_qty}, this deal's max_qty`,
      type: 'less_than_equal',
      input: qty,
      ctx: { le: deal.max_qty, max_qty: deal.max_qty },
    },
  ]);
}

/** An order's amounts at the deal's terms (the batch decides the same from the recorded row). */
export function dealAmounts(d: MenuDeal, qty: number): OrderAmounts {
  const terms = positionTerms(d.market, d.deal, qty);
  return orderAmounts(qty, terms.unitCostCents, terms.feeCents);
}

/** The market's holding fee per unit and session, and its sessions to settle. */
export const holdingTerms = (m: MarketId) => ({
  holdingCents: MARKETS[m].fees.holding_per_unit_session_cents,
  horizon: MARKETS[m].settlement_horizon_ticks,
});
