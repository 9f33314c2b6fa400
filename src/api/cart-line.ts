// A deal of the current menu as a cart line: what the agents' cart API and the holder's /cart forms
// add, from the same in-memory menu snapshots the order route reads.
import type { NewLine } from '../../actors/cart/messages.js';
import { dealNotOnMenu } from '../rules.js';
import { HttpError } from '../http/route.js';
import type { Services } from '../http/services.js';
import type { MenuSnapshots } from '../market-data/snapshots.js';
import { marketOr404 } from './market-params.js';

/**
 * A deal of the current menu as a cart line (the in-memory snapshot the order route uses too): 404
 * when the market is unknown or the deal is not on its current menu (CONTRACT.md "Session boundary").
 */
export function currentLine(
  s: Services,
  snapshots: MenuSnapshots,
  want: { market: string; offer_key: string; qty: number; note?: string },
): NewLine {
  const market = marketOr404(want.market);
  const snap = snapshots.get(market);
  const row = snap.rows.get(want.offer_key);
  if (!row || s.clock.realNow() >= snap.closesAt) {
    throw new HttpError(
      404,
      dealNotOnMenu(
        s.config.baseUrl,
        market,
        want.offer_key,
        `is not on the current menu of ${market} (session ${snap.tick})`,
      ),
    );
  }
  return {
    market,
    tick: snap.tick,
    idx: row.idx,
    offerKey: row.deal.key,
    qty: want.qty,
    maxQty: row.deal.max_qty,
    note: want.note ?? '',
    closesAt: snap.closesAt,
  };
}
