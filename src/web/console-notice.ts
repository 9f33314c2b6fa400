// What the console says after a form (it answers every form): a browser's form
// post is sent on (303) to a console page that names what happened, with the amounts. The facts
// travel in a short-lived HttpOnly cookie set with the 303, not in the address: no link can make the
// console claim anything, and a reload does not repeat it (the page that shows it clears it). The
// value is a code and whole numbers (ids, cents, an instant), read back only in that shape, and
// every word and amount shown is written here.
import { parseCookie, stringifySetCookie } from 'cookie';
import { centsToNumber } from '../engine/money.js';
import { CARD_BRANDS } from '../payments/cards.js';
import { PAYOUTS } from '../payments/terms.js';
import { utcMinute } from './checkout-view.js';
import type { Reply, RequestInfo } from '../http/route.js';
import { formReply, usd, wantsJson } from './answers.js';

const COOKIE = 'console_notice';
/** Long enough for the redirect to be followed on a slow connection, short enough not to linger. */
const MAX_AGE_S = 120;

/** Each notice's facts (whole numbers), in the cookie's order. */
const FIELDS = {
  topup: ['account_id', 'amount_cents', 'balance_cents'],
  coins: ['coins', 'charged_cents', 'fee_cents', 'gc_hundredths'],
  payout: ['payout_id', 'account_id', 'amount_cents', 'commission_cents', 'net_cents', 'pay_at'],
  limits: ['agent_id'],
  funding: ['agent_id'],
  key_revoked: ['agent_id', 'withdrawn'],
  card_removed: ['card_id', 'brand', 'last4'],
  grant: ['grant_id'],
  revoke: ['grant_id'],
  cart_paid: ['orders', 'charged_cents', 'fee_cents'],
} as const;
type Fields = typeof FIELDS;
export type NoticeKind = keyof Fields;
export type Notice = {
  [K in NoticeKind]: { kind: K } & { [F in Fields[K][number]]: number };
}[NoticeKind];

const isKind = (k: string): k is NoticeKind => Object.hasOwn(FIELDS, k);

/** The cookie's value: `kind.n.n...` (an instant to the second: `pay_at` may carry a fraction). */
const encode = (n: Notice) =>
  [
    n.kind,
    ...FIELDS[n.kind].map((f) => Math.floor((n as unknown as Record<string, number>)[f])),
  ].join('.');

/** A notice from the cookie's value, or null for anything not exactly a known code and its whole numbers. */
export function decodeNotice(value: string | undefined): Notice | null {
  const parts = value?.split('.') ?? [];
  const [kind, ...nums] = parts;
  if (
    !kind ||
    !isKind(kind) ||
    nums.length !== FIELDS[kind].length ||
    !nums.every((v) => /^\d{1,15}$/.test(v))
  )
    return null;
  return Object.fromEntries([
    ['kind', kind],
    ...FIELDS[kind].map((f, i) => [f, Number(nums[i])]),
  ]) as Notice;
}

/** The cookie (cleared when `value` is empty): HttpOnly, for the console only, Secure when `baseUrl` is https. */
const cookieOf = (value: string, baseUrl: string) =>
  stringifySetCookie(COOKIE, value, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/console',
    secure: baseUrl.startsWith('https:'),
    maxAge: value ? MAX_AGE_S : 0,
  });

/**
 * A console form's success (CONTRACT.md "Web form posts"): JSON clients get `{ok, ...payload}` as
 * before; a browser is sent on to `next` with the notice that page shows.
 */
export function consoleReply(
  req: RequestInfo,
  next: string,
  payload: Record<string, unknown>,
  notice: Notice,
  baseUrl: string,
): Reply {
  return formReply(
    req,
    next,
    payload,
    wantsJson(req) ? {} : { 'set-cookie': cookieOf(encode(notice), baseUrl) },
  );
}

/** The notice a console page request carries, and the header that clears it once shown (both null without one). */
export function noticeOf(
  req: RequestInfo,
  baseUrl: string,
): { notice: Notice | null; clear: Record<string, string> } {
  const header = req.headers['cookie'];
  const raw = header ? parseCookie(header)[COOKIE] : undefined;
  if (raw === undefined) return { notice: null, clear: {} };
  return { notice: decodeNotice(raw), clear: { 'set-cookie': cookieOf('', baseUrl) } };
}

/** What a notice's words name, read again by the page: the holder's own accounts and agents (someone else's is not named). */
export type NoticeFacts = {
  account: (id: number) => string | undefined;
  agent: (id: number) =>
    | {
        name: string;
        autonomous_funding: boolean;
        max_order: number | null;
        max_day: number | null;
        max_week: number | null;
        markets: string | null;
        expires_at: number | null;
      }
    | undefined;
};

const money = (cents: number) => `${usd(centsToNumber(cents))} USD`;

type NoticeAgent = NonNullable<ReturnType<NoticeFacts['agent']>>;

function limitsText(a: NoticeAgent): string {
  const perOrder =
    a.max_order === null
      ? 'no limit per order'
      : `at most ${money(Math.round(a.max_order * 100))} per order`;
  const perDay =
    a.max_day === null
      ? 'no limit per day'
      : `at most ${money(Math.round(a.max_day * 100))} per UTC day`;
  // The week and the end are named only when set: most holders set neither.
  const perWeek =
    a.max_week === null ? '' : `; at most ${money(Math.round(a.max_week * 100))} per week`;
  const ends = a.expires_at === null ? '' : `; they end ${utcMinute(a.expires_at)}`;
  return `Limits saved for ${a.name}: ${perOrder}; ${perDay}${perWeek}; ${a.markets ? `markets ${a.markets.split(',').join(', ')}` : 'every market'}${ends}.`;
}

function keyRevokedText(name: string, withdrawn: number): string {
  const orders =
    withdrawn === 0
      ? 'it had no order awaiting payment'
      : `its ${withdrawn} order${withdrawn === 1 ? '' : 's'} awaiting payment ${withdrawn === 1 ? 'was' : 'were'} withdrawn`;
  return `Revoked ${name}'s key for good: every request with it is now refused, its streams ended and ${orders}. Its account, positions and history stay yours.`;
}

/** The sentence a notice shows, or undefined when what it names is not the holder's (nothing is said then). */
export function noticeText(n: Notice, facts: NoticeFacts): string | undefined {
  switch (n.kind) {
    case 'topup': {
      const account = facts.account(n.account_id);
      return (
        account &&
        `Added ${money(n.amount_cents)} to ${account} (account ${n.account_id}) by card. Its balance is now ${money(n.balance_cents)}.`
      );
    }
    case 'coins': {
      const fee =
        n.fee_cents > 0 ? `, plus this month's participation fee of ${money(n.fee_cents)}` : '';
      return (
        `Bought ${n.coins} Gold Coins for ${money(n.charged_cents - n.fee_cents)} by card${fee}: ${money(n.charged_cents)} charged. ` +
        `Your Gold Coin balance is ${(n.gc_hundredths / 100).toFixed(2)} GC.`
      );
    }
    case 'payout': {
      const account = facts.account(n.account_id);
      return (
        account &&
        `Payout ${n.payout_id} requested from ${account} (account ${n.account_id}): ${money(n.amount_cents)} left the balance now. ` +
          `You will be paid ${money(n.net_cents)} (${money(n.amount_cents)} minus the ${PAYOUTS.commission_pct} % commission of ${money(n.commission_cents)}) on ${utcMinute(n.pay_at)}.`
      );
    }
    case 'limits': {
      const a = facts.agent(n.agent_id);
      return a && limitsText(a);
    }
    case 'funding': {
      const a = facts.agent(n.agent_id);
      return a && `Autonomous funding is now ${a.autonomous_funding ? 'on' : 'off'} for ${a.name}.`;
    }
    case 'key_revoked': {
      const a = facts.agent(n.agent_id);
      return a && keyRevokedText(a.name, n.withdrawn);
    }
    case 'card_removed': {
      const brand = CARD_BRANDS[n.brand];
      const card = brand
        ? `${brand} •••• ${String(n.last4).padStart(4, '0')}`
        : `card ${n.card_id}`;
      return `Removed your stored ${card}: it is no longer offered when you pay.`;
    }
    case 'grant':
      return `Grant ${n.grant_id} made: it is listed under Cart grants.`;
    case 'revoke':
      return `Grant ${n.grant_id} revoked.`;
    case 'cart_paid': {
      const fee =
        n.fee_cents > 0 ? `, with this month's participation fee of ${money(n.fee_cents)}` : '';
      return (
        `Paid ${n.orders} order${n.orders === 1 ? '' : 's'} of the cart: ${money(n.charged_cents)} charged${fee}. ` +
        `Each fills when its session closes; the receipt is linked beside ${n.orders === 1 ? 'it' : 'them'} below.`
      );
    }
  }
}

/** The card_removed notice of a removal's answer (an answer stored before it named the card: by its id only). */
export function cardRemovedNotice(r: { card_id: number; brand?: string; last4?: string }): Notice {
  const brand = CARD_BRANDS.indexOf((r.brand ?? '') as (typeof CARD_BRANDS)[number]);
  return {
    kind: 'card_removed',
    card_id: r.card_id,
    brand: brand < 0 ? CARD_BRANDS.length : brand,
    last4: r.last4 ? Number(r.last4) : 0,
  };
}
