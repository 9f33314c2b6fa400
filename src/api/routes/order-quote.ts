// POST /api/v1/orders/quote (CONTRACT.md "Quotes"): what an order would be before it is placed:
// its amounts and what the holder pays, the holder's limits against it, whether the balance would
// fund it, its session, what it risks on the record, and what POST /orders would answer now. The
// same checks as the order (src/api/order-terms.ts) and the order batch's own decision on a
// snapshot (actors/account/quote.ts); nothing is stored, reserved or charged.
import type { Static } from 'typebox';
import { read } from '../../../actors/runtime/client.js';
import { centsToNumber, dealToJson, surchargeRangeCents } from '../../engine/index.js';
import {
  type HttpError,
  json,
  route,
  type AgentContext,
  type Reply,
  type Route,
} from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { recordOpen } from '../../market-data/live-session.js';
import { holderPays } from '../../payments/fee.js';
import { OrderCreate, QuoteAnswer } from '../../schemas/index.js';
import { PROJECTION_DEFAULTS, projectDeal } from '../deal-projection.js';
import {
  dealAmounts,
  holdingTerms,
  menuDealOr404,
  qtyRefusal,
  type MenuDeal,
} from '../order-terms.js';

type Quote = Static<typeof QuoteAnswer>;

export function orderQuoteRoute(s: Services): Route {
  return route<unknown, unknown, OrderCreate>({
    method: 'POST',
    path: '/api/v1/orders/quote',
    operationId: 'quote_order',
    auth: 'key',
    summary:
      'What an order would be before placing it: the total the holder pays, the limits and funding against it, its risk, and what POST /orders would answer now; nothing is stored or charged',
    body: OrderCreate,
    response: { 200: QuoteAnswer },
    responses: {
      404: {
        description: 'unknown market, or the deal is not on the current menu (its session closed)',
      },
      503: {
        description:
          "the record has not opened the deal's session yet (the previous close still runs); retry",
      },
    },
    handler: (c) => quoteOrder(s, c),
  });
}

async function quoteOrder(
  s: Services,
  { body, principal }: AgentContext<unknown, unknown, OrderCreate>,
): Promise<Reply> {
  const d = menuDealOr404(s, body.market, body.offer_key);
  await recordOpen(s, d.snap);
  const amounts = dealAmounts(d, body.qty);
  const [facts, projection] = await Promise.all([
    read(s.runtime, 'account.quote', {
      accountId: principal.accountId,
      agentId: principal.agentId,
      market: d.market,
      tick: d.snap.tick,
      idx: d.idx,
      offerKey: d.deal.key,
      qty: body.qty,
      closesAt: d.snap.closesAt,
      at: d.at,
      payFromBalance: body.pay_from_balance,
      baseUrl: s.config.baseUrl,
      totalCents: amounts.totalCents,
    }),
    projectDeal(s, d.snap, dealToJson(d.deal), PROJECTION_DEFAULTS),
  ]);
  const tooMany = qtyRefusal(d.deal, body.qty);
  const quote: Quote = {
    market: d.market,
    offer_key: d.deal.key,
    qty: body.qty,
    unit_cost: centsToNumber(d.deal.unit_cost_cents),
    fee_amount: centsToNumber(amounts.feeAmountCents),
    total_amount: centsToNumber(amounts.totalCents),
    holder_pays: holderPays(amounts.totalCents, facts.feeCharged),
    limits: facts.limits,
    funding: facts.funding,
    session: {
      tick: d.snap.tick,
      closes_at: d.snap.closesAt,
      seconds_to_close: Math.max(0, Math.round((d.snap.closesAt - d.at) * 1000) / 1000),
    },
    risk: riskOf(d, body.qty, amounts.totalCents, projection),
    // The front end's own refusal comes first, as it does for POST /orders.
    would_answer: tooMany ? refusalOf(tooMany) : (facts.would as Quote['would_answer']),
  };
  return json(quote);
}

type Projection = Awaited<ReturnType<typeof projectDeal>>;

/** What the order risks: the record's similar deals and surcharges, and the most it can lose. */
function riskOf(d: MenuDeal, qty: number, totalCents: number, p: Projection): Quote['risk'] {
  const { holdingCents, horizon } = holdingTerms(d.market);
  const surcharge = surchargeRangeCents(d.market, qty, d.deal.unit_cost_cents);
  const maxLossCents = totalCents + qty * holdingCents * horizon;
  return {
    similar: {
      n: p.samples.settled,
      lost: p.samples.lost,
      median_per_unit: p.samples.median_pnl_per_unit,
      worst_per_unit: p.samples.worst_pnl_per_unit,
    },
    surcharge: {
      rate: p.surcharge.rate,
      median: p.surcharge.median_per_unit,
      this_order_low: centsToNumber(surcharge.low),
      this_order_high: centsToNumber(surcharge.high),
    },
    max_loss: centsToNumber(maxLossCents),
    max_loss_with_surcharge: centsToNumber(maxLossCents + surcharge.high),
  };
}

function refusalOf(e: HttpError): Quote['would_answer'] {
  return { status: e.status as 422, detail: e.detail };
}
