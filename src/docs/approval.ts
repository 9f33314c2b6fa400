// The guide's "Receipts and limits" section (/llms.txt and /docs/agents): what proves the holder
// approved a payment (CONTRACT.md "Signed approval receipts") and what bounds what an agent funds
// without them ("Spending limits").
import { WS_CLOSE } from '../events/ws-protocol.js';
import type { RoutePaths } from './route-paths.js';
import type { Section } from './section.js';

export function approvalSection(at: RoutePaths): Section {
  return {
    id: 'receipts-and-limits',
    title: 'Receipts and limits',
    items: [
      `An order your holder pays (its purchase link, a cart link, the console) or an execute checkout under their grant carries "receipt": a compact JWS (EdDSA) of what was approved: iss, iat, jti, orders [{id, market, offer_key, qty, total_amount}], charged, fee (the month's participation fee this payment carried, 0 if none; also as participation_fee; not the orders' fulfilment fee_amount), currency, method, approval (holder or standing), agent_id and an opaque holder id. ${at.req('GET', '/orders/{order_id}')} and the order.paid event carry it; pay_from_balance orders carry none.`,
      `Anyone verifies one against the public keys at ${at.url('/.well-known/jwks.json')}, in five lines of JavaScript with jose: import { createRemoteJWKSet, jwtVerify } from 'jose'; const keys = createRemoteJWKSet(new URL('${at.url('/.well-known/jwks.json')}')); const { payload } = await jwtVerify(order.receipt, keys, { algorithms: ['EdDSA'] }); console.log(payload.approval, payload.orders, payload.charged); (a tampered receipt throws).`,
      `Your holder may bound what you fund without them (pay_from_balance, execute checkouts): max_order (USD per order), max_day (USD per UTC day), max_week (USD per ISO week, from Monday 00:00 UTC), markets, and expires_at (unix seconds: from then on nothing is funded without them until they set your limits again). ${at.req('GET', '/agents/me')} serves them as "limits" with spent_today and spent_week; an order over one is a 403 {detail, limit, limit_value, spent, remaining, order_total} (nothing is charged), and a change is a limits.changed event. ${at.req('POST', '/orders/quote')} checks every limit against an order before you place it.`,
      `Your holder may also revoke your key for good (their console): from then on every request with it answers 401 with a detail saying so, your streams end (the SSE stream with a last comment, the WebSocket with close code ${WS_CLOSE.unauthorized}), your orders awaiting payment are withdrawn (order.cancelled, by: holder) and the key cannot be registered again (409). Your account and its record stay your holder's.`,
    ],
  };
}
