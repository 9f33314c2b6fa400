// A paid order's receipt as a holder reads it (CONTRACT.md "Signed approval receipts"):
// what was bought, how much, when and how it was approved, every signed field with its meaning, the
// JWS itself to copy, and how anyone verifies it. The page verifies it too, with jose against the
// keys the service publishes at /.well-known/jwks.json, and says what it found: the fields shown are
// the JWS's own, never the order's row.
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  jwtVerify,
  type JWTPayload,
} from 'jose';
import type { Jwks } from '../../actors/receipts/messages.js';
import { isoOf, utcMinute } from './checkout-view.js';
import { usd } from './answers.js';

/** One order line of a receipt's `orders`. */
type ReceiptOrder = {
  id?: unknown;
  market?: unknown;
  offer_key?: unknown;
  qty?: unknown;
  total_amount?: unknown;
};

const APPROVAL_WORDS: Record<string, string> = {
  holder: 'by you: you paid it yourself (a purchase link, a cart link or your console)',
  standing:
    'by your standing grant: your agent checked its cart out under an execute grant of yours',
};
const METHOD_WORDS: Record<string, string> = { card: 'card', balance: 'the account balance' };

const amount = (v: unknown) => (typeof v === 'number' ? `${usd(v)} USD` : '');
const text = (v: unknown) =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** Whether `jws` verifies against `jwks` (EdDSA only, as the receipts are signed). */
async function verifies(jws: string, jwks: Jwks): Promise<boolean> {
  try {
    await jwtVerify(jws, createLocalJWKSet(jwks), { algorithms: ['EdDSA'] });
    return true;
  } catch {
    return false;
  }
}

/** The receipt page's view: `titles` names the deals of the orders the holder can see (the receipt itself names offer keys). */
export async function receiptView(
  jws: string,
  jwks: Jwks,
  jwksUrl: string,
  titles: Map<number, string>,
) {
  const header = decodeProtectedHeader(jws);
  const p: JWTPayload & Record<string, unknown> = decodeJwt(jws);
  const orders = (Array.isArray(p.orders) ? (p.orders as ReceiptOrder[]) : []).map((o) => ({
    id: text(o.id),
    market: text(o.market),
    offer_key: text(o.offer_key),
    qty: text(o.qty),
    total: amount(o.total_amount),
    title: titles.get(Number(o.id)) ?? '',
  }));
  const approval = APPROVAL_WORDS[text(p.approval)] ?? text(p.approval);
  const when = typeof p.iat === 'number' ? utcMinute(p.iat) : '';
  const fields: [string, string, string][] = [
    [
      'orders',
      orders
        .map((o) => `order ${o.id}: ${o.qty} × ${o.offer_key} (${o.market}), ${o.total}`)
        .join('; '),
      'what was bought, line by line',
    ],
    ['charged', amount(p.charged), 'what this payment charged'],
    [
      'fee',
      amount(p.fee),
      "the month's participation fee this payment carried (0 if none); also as participation_fee",
    ],
    ['currency', text(p.currency), 'the currency of every amount'],
    ['method', text(p.method), 'what paid: card or balance'],
    ['approval', text(p.approval), 'holder: you were present; standing: your grant'],
    ['agent_id', text(p.agent_id), 'the agent whose orders these are'],
    ['holder', text(p.holder), 'you, as an opaque id (the same on every receipt of yours)'],
    [
      'iat',
      typeof p.iat === 'number' ? `${p.iat} (${when})` : '',
      'when it was approved (unix seconds)',
    ],
    ['iss', text(p.iss), 'who signed it: this service'],
    ['jti', text(p.jti), "this receipt's own id"],
  ];
  return {
    jws,
    jwks_url: jwksUrl,
    kid: text(header.kid),
    alg: text(header.alg),
    verified: await verifies(jws, jwks),
    orders,
    one_order: orders.length === 1,
    charged: amount(p.charged),
    fee: amount(p.fee),
    has_fee: typeof p.fee === 'number' && p.fee > 0,
    method: METHOD_WORDS[text(p.method)] ?? text(p.method),
    approval,
    when,
    when_iso: typeof p.iat === 'number' ? isoOf(p.iat) : '',
    fields: fields.map(([name, value, meaning]) => ({ name, value, meaning })),
  };
}
