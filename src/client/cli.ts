#!/usr/bin/env node
// agent-market: the API from a shell, on the typed client (src/client/index.ts), for the whole
// loop of an agent: a key, registration, markets, deals and their projections, orders, carts and
// their links, events, receipts. Readable tables, or the API's JSON with --json. The key comes from
// AGENT_MARKET_KEY or --key, the service from AGENT_MARKET_URL or --url (default
// http://127.0.0.1:8080; an empty variable counts as unset). Exit 0 on success, 1 when the API
// refused or the service could not be reached (said on stderr, with the URL tried), 2 on a usage error.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { MARKET_IDS } from '../engine/markets.js';
import { createClient, DEFAULT_BASE_URL, type ApiClient } from './index.js';

const USAGE = `agent-market: the agent market-access API from a shell

usage: agent-market [--json] [--key KEY] [--url URL] <command> [arguments]

  token                                          invent a fresh API key (nothing is stored yet)
  register --name NAME [--recall-phrase P] [--token KEY]
                                                 register an agent under KEY (a fresh one if none);
                                                 prints the key to export as AGENT_MARKET_KEY
  markets                                        the markets and their open sessions
  deals <market> [--family F] [--house-only]     the current menu of a market (${MARKET_IDS.join(', ')})
  projection <market> <offer_key> [--lookback N] the naive projection of a deal: P&L by volume
  quote <market> <offer_key> <qty> [--pay-from-balance]
                                                 first: what the order would be (the total the
                                                 holder pays, your limits, what it could lose,
                                                 what ordering answers); nothing is placed
  order <market> <offer_key> <qty> [--pay-from-balance] [--idempotency-key K]
                                                 order a deal; hand the purchase_url to your holder
  cancel <order_id> [--idempotency-key K]        withdraw an order still awaiting payment
  orders [--status S]                            my orders, newest first
  positions [--status open|settled]              my positions, newest first
  account                                        my balance, counts, realised P&L
  events [--after ID] [--types a,b] [--follow] [--max N]
                                                 my account's events (--follow: as they happen)
  wait [--after ID] [--types a,b] [--timeout S]  wait for my next events after ID (at most S s)
  cart                                           my default cart and its checkout_url
  cart add <market> <offer_key> <qty> [--note TEXT] [--idempotency-key K]
                                                 propose a deal as a cart line
  cart list                                      every cart I can see
  cart link                                      the links of my default cart to hand to a holder
  receipt verify <order_id | receipt>            check an approval receipt's signature against
                                                 the service's public keys; print what it approves

An agent's loop: deals, quote what you would take, order (or cart add) what the
quote allows, hand the link to your holder, wait for the events.

  --json      print the API's JSON (events: one JSON object a line)
  --key KEY   the agent's API key (default: $AGENT_MARKET_KEY)
  --url URL   the service (default: $AGENT_MARKET_URL or ${DEFAULT_BASE_URL})
`;

class Usage extends Error {}
class Refused extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
  ) {
    super(`${status}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
  }
}

type Out = { json: boolean; write: (line: string) => void };

/** Columns padded to their widest cell; numbers right-aligned. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (!rows.length) return '(none)';
  const cell = (v: unknown) =>
    v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const numeric = columns.map((_, i) =>
    rows.every((r) => typeof r[columns[i]] === 'number' || r[columns[i]] == null),
  );
  const line = (r: string[]) =>
    r
      .map((v, i) => (numeric[i] ? v.padStart(widths[i]) : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** The answer's data, or a Refused with the API's status and detail. */
async function answer<T>(
  p: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await p;
  if (response.ok && data !== undefined) return data;
  const detail =
    error && typeof error === 'object' && 'detail' in error
      ? (error as { detail: unknown }).detail
      : (error ?? response.statusText);
  throw new Refused(response.status, detail);
}

const int = (v: string | undefined, what: string): number => {
  if (v === undefined || !/^\d+$/.test(v))
    throw new Usage(`${what} must be a whole number (got ${v ?? 'nothing'})`);
  return Number(v);
};
const idem = (k: string | undefined) => (k ? { 'idempotency-key': k } : undefined);

/** Every option of every command (parseArgs' table). */
const OPTIONS = {
  json: { type: 'boolean', default: false },
  key: { type: 'string' },
  url: { type: 'string' },
  family: { type: 'string' },
  'house-only': { type: 'boolean' },
  'pay-from-balance': { type: 'boolean' },
  'idempotency-key': { type: 'string' },
  status: { type: 'string' },
  after: { type: 'string' },
  types: { type: 'string' },
  follow: { type: 'boolean' },
  max: { type: 'string' },
  note: { type: 'string' },
  name: { type: 'string' },
  'recall-phrase': { type: 'string' },
  token: { type: 'string' },
  lookback: { type: 'string' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(
  argv: string[],
  env: NodeJS.ProcessEnv,
  out: Out,
  err: (line: string) => void,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: OPTIONS,
    });
  } catch (e) {
    err(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const {
    values: o,
    positionals: [command, ...args],
  } = parsed;
  if (o.help || !command || command === 'help') {
    out.write(USAGE);
    return command || o.help ? 0 : 2;
  }
  out.json = !!o.json;
  const base = baseUrlOf(o.url as string | undefined, env);
  try {
    if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) {
      throw new Usage(
        `the service's URL must be an http(s) URL (from ${o.url ? '--url' : 'AGENT_MARKET_URL'}): ${JSON.stringify(base)}`,
      );
    }
    const commandOf = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!commandOf) throw new Usage(`unknown command ${command}`);
    await commandOf({ api: createClient(base, o.key || env.AGENT_MARKET_KEY), base }, args, o, out);
    return 0;
  } catch (e) {
    if (e instanceof Usage) {
      err(`${e.message}\n\n${USAGE}`);
      return 2;
    }
    if (e instanceof Refused) {
      err(out.json ? JSON.stringify({ status: e.status, detail: e.detail }) : `error ${e.message}`);
      if (e.status === 401) err("send the agent's key: --key KEY or AGENT_MARKET_KEY");
      return 1;
    }
    err(`error: ${unreachable(e, base) ?? (e as Error).message}`);
    return 1;
  }
}

/**
 * The service's address: --url, else AGENT_MARKET_URL, else the default. An empty one is unset (a
 * shell's `AGENT_MARKET_URL= agent-market ...`), not a relative URL.
 */
export const baseUrlOf = (flag: string | undefined, env: NodeJS.ProcessEnv): string =>
  flag || env.AGENT_MARKET_URL || DEFAULT_BASE_URL;

/** A fetch that failed before any answer ("fetch failed"), said with the URL tried and the cause. */
function unreachable(e: unknown, base: string): string | undefined {
  if (!(e instanceof TypeError) || e.message !== 'fetch failed') return undefined;
  const cause = e.cause as { code?: string; message?: string } | undefined;
  return `cannot reach the service at ${base} (${cause?.code ?? cause?.message ?? 'no answer'}): is it running? Set --url or AGENT_MARKET_URL`;
}

type Options = Record<string, string | boolean | undefined>;
/** The client and the service's base URL it speaks to. */
type Service = { api: ApiClient; base: string };
type Command = (s: Service, args: string[], o: Options, out: Out) => Promise<void>;

const print = (out: Out, data: unknown, text: () => string) =>
  out.write(out.json ? JSON.stringify(data) : text());
const money = (x: number | null | undefined) =>
  x === null || x === undefined ? '-' : x.toFixed(2);
const time = (unix: number | null | undefined) =>
  unix ? new Date(unix * 1000).toISOString().replace('.000Z', 'Z') : '-';

type ServedEvent = { id: number; type: string; created_at: number; data: unknown };
/** An event as one line: id, instant, type, what it is about. */
const eventLine = (e: ServedEvent) =>
  `${String(e.id).padStart(6)}  ${time(e.created_at)}  ${e.type.padEnd(18)}  ${summary(e.data)}`;

const COMMANDS: Record<string, Command> = {
  async token({ api }, _args, _o, out) {
    const data = await answer(api.POST('/api/v1/agents/token'));
    print(out, data, () =>
      [
        `key ${data.token}`,
        `key id ${data.key_id} (public); nothing is stored until you register it:`,
        `  agent-market register --token ${data.token} --name NAME --recall-phrase ${JSON.stringify(data.recall_phrase_suggestion)}`,
      ].join('\n'),
    );
  },

  async register({ api }, _args, o, out) {
    if (!o.name) throw new Usage('register --name NAME [--recall-phrase P] [--token KEY]');
    let token = o.token as string | undefined;
    let phrase = o['recall-phrase'] as string | undefined;
    if (!token) {
      const fresh = await answer(api.POST('/api/v1/agents/token'));
      token = fresh.token;
      phrase ??= fresh.recall_phrase_suggestion;
    }
    if (!phrase)
      throw new Usage(
        'register --token KEY needs --recall-phrase P (a phrase that helps you recognise the key later)',
      );
    const data = await answer(
      api.POST('/api/v1/agents/register', {
        body: { token, name: String(o.name), recall_phrase: phrase },
      }),
    );
    print(out, { ...data, token }, () =>
      [
        `agent ${data.agent_id} (${data.name}), account ${data.account_id}, key id ${data.key_id}, recall phrase ${JSON.stringify(phrase)}`,
        'your key, shown once (keep it secret; the service stores only its hash):',
        `  export AGENT_MARKET_KEY=${token}`,
        `your cart for your holder: ${data.cart.checkout_url}`,
      ].join('\n'),
    );
  },

  async markets({ api }, _args, _o, out) {
    const data = await answer(api.GET('/api/v1/markets'));
    print(out, data, () =>
      table(
        data.markets.map((m) => ({
          id: m.id,
          label: m.label,
          interval_seconds: m.interval_seconds,
          session: m.current_tick,
          closes_at: time(m.tick_closes_at),
          seconds_to_close: m.seconds_to_close,
          max_qty: m.max_qty,
        })),
        ['id', 'label', 'interval_seconds', 'session', 'closes_at', 'seconds_to_close', 'max_qty'],
      ),
    );
  },

  async deals({ api }, [market], o, out) {
    if (!market) throw new Usage('deals <market>');
    const data = await answer(
      api.GET('/api/v1/markets/{market_id}/deals', {
        params: {
          path: { market_id: market },
          query: {
            ...(o.family ? { family: String(o.family) } : {}),
            ...(o['house-only'] ? { house_only: true } : {}),
          } as never,
        },
      }),
    );
    print(out, data, () =>
      [
        `${market} session ${data.tick}, closes ${time(data.closes_at)}: ${data.deals.length} deals`,
        table(
          data.deals.map((d) => ({
            key: d.key,
            family: d.sku_family,
            unit_cost: money(d.unit_cost),
            list_price: money(d.list_price),
            margin: d.margin,
            max_qty: d.max_qty,
            house: d.house_accepted,
          })),
          ['key', 'family', 'unit_cost', 'list_price', 'margin', 'max_qty', 'house'],
        ),
      ].join('\n'),
    );
  },

  async projection({ api }, [market, offerKey], o, out) {
    if (!market || !offerKey) throw new Usage('projection <market> <offer_key> [--lookback N]');
    const query =
      o.lookback === undefined ? {} : { lookback: int(o.lookback as string, '--lookback') };
    const data = await answer(
      api.GET('/api/v1/markets/{market_id}/deals/{offer_key}/projection', {
        params: { path: { market_id: market, offer_key: offerKey }, query: query as never },
      }),
    );
    // Every volume up to 10, then every tenth: the curve's shape without hundreds of lines.
    const rows = data.qty.flatMap((q, i) =>
      q <= 10 || q % 10 === 0 || q === data.best_qty
        ? [
            {
              qty: q,
              low: money(data.curve.low[i]),
              mid: money(data.curve.mid[i]),
              high: money(data.curve.high[i]),
              best: q === data.best_qty ? '<' : '',
            },
          ]
        : [],
    );
    print(out, data, () =>
      [
        `${data.market} ${offerKey} (${data.sku_family}), session ${data.tick}: a naive projection from ${data.fit.points} closed sessions (${data.fit.kind} fit, r2 ${data.fit.r2.toFixed(2)})`,
        `it only speeds or slows the family's sales: it does not cover a fall in price or a downside; losses are possible`,
        `settled similar deals: ${data.samples.settled} of ${data.samples.deals}, ${data.samples.profitable} in profit, ${data.samples.downside_events} hit by a downside`,
        'cash P&L by volume (USD):',
        table(rows, ['qty', 'low', 'mid', 'high', 'best']),
      ].join('\n'),
    );
  },

  async order({ api }, [market, offerKey, qty], o, out) {
    if (!market || !offerKey) throw new Usage('order <market> <offer_key> <qty>');
    const data = await answer(
      api.POST('/api/v1/orders', {
        body: {
          market,
          offer_key: offerKey,
          qty: int(qty, 'qty'),
          pay_from_balance: !!o['pay-from-balance'],
        },
        params: { header: idem(o['idempotency-key'] as string | undefined) } as never,
      }),
    );
    print(out, data, () =>
      [
        `order ${data.id}: ${data.qty} x ${data.deal_title}`,
        `status ${data.status}, total ${money(data.total_amount)}, session closes ${time(data.closes_at)}`,
        data.status === 'awaiting_payment'
          ? `hand this link to your holder, who pays it before the close:\n${data.purchase_url}`
          : '',
      ]
        .filter(Boolean)
        .join('\n'),
    );
  },

  async quote({ api }, [market, offerKey, qty], o, out) {
    if (!market || !offerKey) throw new Usage('quote <market> <offer_key> <qty>');
    const data = await answer(
      api.POST('/api/v1/orders/quote', {
        body: {
          market,
          offer_key: offerKey,
          qty: int(qty, 'qty'),
          pay_from_balance: !!o['pay-from-balance'],
        },
      }),
    );
    const w = data.would_answer;
    print(out, data, () =>
      [
        `${data.qty} x ${offerKey} on ${data.market}: total ${money(data.total_amount)}; the holder pays ${money(data.holder_pays.total)} now (fee ${money(data.holder_pays.participation_fee)})`,
        `ordering now would answer ${w.status}${w.detail === undefined ? '' : `: ${typeof w.detail === 'string' ? w.detail : JSON.stringify(w.detail)}`}`,
        `limits ${data.limits.allowed ? 'allow' : 'refuse'} funding it without the holder; pay_from_balance ${data.funding.pay_from_balance_allowed ? 'would fund it' : 'would not fund it'} (balance ${money(data.funding.balance)})`,
        `risk: ${data.risk.similar.lost} of ${data.risk.similar.n} similar settled deals lost; a downside surcharge would add ${money(data.risk.surcharge.this_order_low)} to ${money(data.risk.surcharge.this_order_high)}; at most ${money(data.risk.max_loss_with_surcharge)} can be lost`,
        `session ${data.session.tick} closes ${time(data.session.closes_at)} (${Math.round(data.session.seconds_to_close)} s)`,
      ].join('\n'),
    );
  },

  async wait({ api }, _args, o, out) {
    const data = await answer(
      api.GET('/api/v1/events/wait', {
        params: {
          query: {
            after: o.after === undefined ? 0 : int(o.after as string, '--after'),
            ...(o.types ? { types: String(o.types) } : {}),
            ...(o.timeout === undefined
              ? {}
              : { timeout_s: int(o.timeout as string, '--timeout') }),
          } as never,
        },
      }),
    );
    if (out.json) return out.write(JSON.stringify(data));
    if (!data.events.length)
      return out.write(`(no events after ${o.after ?? 0}; next_after ${data.next_after})`);
    for (const e of data.events) out.write(eventLine(e));
  },

  async cancel({ api }, [orderId], o, out) {
    if (!orderId) throw new Usage('cancel <order_id>');
    const data = await answer(
      api.DELETE('/api/v1/orders/{order_id}', {
        params: {
          path: { order_id: int(orderId, 'order_id') },
          header: idem(o['idempotency-key'] as string | undefined),
        } as never,
      }),
    );
    print(
      out,
      data,
      () =>
        `order ${data.id}: ${data.status}; its purchase link takes no payment and nothing was charged`,
    );
  },

  async orders({ api }, _args, o, out) {
    const data = await answer(
      api.GET('/api/v1/orders', {
        params: { query: (o.status ? { status: o.status } : {}) as never },
      }),
    );
    print(out, data, () =>
      table(
        data.orders.map((x) => ({
          id: x.id,
          market: x.market,
          tick: x.tick,
          qty: x.qty,
          total: money(x.total_amount),
          status: x.status,
          position: x.position_id,
        })),
        ['id', 'market', 'tick', 'qty', 'total', 'status', 'position'],
      ),
    );
  },

  async positions({ api }, _args, o, out) {
    const data = await answer(
      api.GET('/api/v1/positions', {
        params: { query: (o.status ? { status: o.status } : {}) as never },
      }),
    );
    print(out, data, () =>
      table(
        data.positions.map((p) => ({
          id: p.id,
          market: p.market,
          deal: p.deal_title,
          qty: p.qty,
          sold: p.units_sold,
          ticks: `${p.ticks_done}/${p.horizon}`,
          pnl: money(p.realized_pnl ?? p.pnl_so_far),
          status: p.status,
        })),
        ['id', 'market', 'deal', 'qty', 'sold', 'ticks', 'pnl', 'status'],
      ),
    );
  },

  async account({ api }, _args, _o, out) {
    const data = await answer(api.GET('/api/v1/account'));
    print(out, data, () =>
      table(
        Object.entries(data)
          .filter(([, v]) => typeof v !== 'object' || v === null)
          .map(([field, value]) => ({ field, value })),
        ['field', 'value'],
      ),
    );
  },

  async events({ api }, _args, o, out) {
    const max = o.max === undefined ? Infinity : int(o.max as string, '--max');
    let after = o.after === undefined ? 0 : int(o.after as string, '--after');
    const types = o.types as string | undefined;
    const line = (e: ServedEvent) => out.write(out.json ? JSON.stringify(e) : eventLine(e));
    if (!o.follow) {
      const data = await answer(
        api.GET('/api/v1/events', {
          params: {
            query: {
              after,
              ...(types ? { types } : {}),
              ...(Number.isFinite(max) ? { limit: max } : {}),
            } as never,
          },
        }),
      );
      if (out.json) out.write(JSON.stringify(data));
      else if (!data.events.length) out.write('(no events)');
      else data.events.forEach((e) => line(e as never));
      return;
    }
    // Follow the Server-Sent Events stream; reconnect from the last id when it ends.
    let seen = 0;
    for (;;) {
      const { response, error } = await api.GET('/api/v1/events/stream', {
        params: { query: { ...(after ? { after } : {}), ...(types ? { types } : {}) } as never },
        headers: { accept: 'text/event-stream' },
        parseAs: 'stream',
      });
      if (!response.ok || !response.body)
        throw new Refused(
          response.status,
          (error as { detail?: unknown } | undefined)?.detail ?? response.statusText,
        );
      for await (const e of sseEvents(response.body)) {
        after = e.id;
        line(e);
        if (++seen >= max) {
          await response.body.cancel().catch(() => {});
          return;
        }
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  },

  async cart(s, args, o, out) {
    const [sub, ...rest] = args;
    if (sub === undefined || sub === 'show') return cartShow(s, rest, o, out);
    if (sub === 'list') return cartList(s, rest, o, out);
    if (sub === 'link') return cartLink(s, rest, o, out);
    if (sub !== 'add' || !rest[0] || !rest[1])
      throw new Usage('cart [show | list | link | add <market> <offer_key> <qty> [--note TEXT]]');
    return cartAdd(s, rest, o, out);
  },

  /** Verifies with jose against the service's JWKS (never hand-written crypto), as SPEC's receipts say anyone can. */
  async receipt({ api, base }, [sub, what], _o, out) {
    if (sub !== 'verify' || !what) throw new Usage('receipt verify <order_id | receipt>');
    let receipt = what;
    if (/^\d+$/.test(what)) {
      const order = await answer(
        api.GET('/api/v1/orders/{order_id}', { params: { path: { order_id: Number(what) } } }),
      );
      if (!order.receipt)
        throw new Usage(
          `order ${what} has no receipt: only an order a holder's hand or standing grant funded has one (status ${order.status})`,
        );
      receipt = order.receipt;
    } else if (!JWS.test(what)) {
      throw new Usage(
        'a receipt is a compact JWS (three base64url parts separated by dots), or give an order id',
      );
    }
    const keys = createRemoteJWKSet(new URL('/.well-known/jwks.json', base));
    let verified;
    try {
      verified = await jwtVerify(receipt, keys, { algorithms: ['EdDSA'] });
    } catch (e) {
      if (unreachable(e, base)) throw e;
      throw new Refused(
        422,
        `the receipt does not verify against ${new URL('/.well-known/jwks.json', base).href}: ${(e as Error).message}`,
      );
    }
    const { payload, protectedHeader } = verified;
    print(out, { valid: true, key_id: protectedHeader.kid, payload }, () =>
      [
        `valid: signed by ${String(payload.iss)} with key ${protectedHeader.kid}`,
        table(
          Object.entries(payload).map(([field, value]) => ({ field, value })),
          ['field', 'value'],
        ),
      ].join('\n'),
    );
  },
};

/** My default cart: its lines and its checkout link. */
const cartShow: Command = async ({ api }, _args, _o, out) => {
  const data = await answer(api.GET('/api/v1/cart'));
  print(out, data, () =>
    [
      `cart ${data.id} (${data.kind}${data.paired ? ', connected to a holder' : ''}): ${data.items.length} lines`,
      table(
        data.items.map((i) => ({
          id: i.id,
          market: i.market,
          offer_key: i.offer_key,
          deal: i.deal_title,
          qty: i.qty,
          total: money(i.total),
          status: i.status,
        })),
        ['id', 'market', 'offer_key', 'deal', 'qty', 'total', 'status'],
      ),
      `checkout_url (for your holder): ${data.checkout_url}`,
    ].join('\n'),
  );
};

/** Every cart I can see. */
const cartList: Command = async ({ api }, _args, _o, out) => {
  const data = await answer(api.GET('/api/v1/carts'));
  print(out, data, () =>
    table(
      data.carts.map((c) => ({
        id: c.id,
        name: c.name,
        kind: c.kind,
        mine: c.mine,
        connected: c.associated,
        open: c.open_items,
        stale: c.stale_items,
        total: money(c.total),
        checkout_url: c.checkout_url,
      })),
      ['id', 'name', 'kind', 'mine', 'connected', 'open', 'stale', 'total', 'checkout_url'],
    ),
  );
};

/** The links of my default cart to hand to a holder. */
const cartLink: Command = async ({ api }, _args, _o, out) => {
  const data = await answer(api.POST('/api/v1/cart/link'));
  print(out, data, () =>
    [
      `cart ${data.cart_id}: hand one of these to your holder`,
      `  to review and pay it:      ${data.checkout_url}`,
      `  to connect you to them:    ${data.pairing_url}`,
    ].join('\n'),
  );
};

/** A deal proposed as a line of my default cart. */
const cartAdd: Command = async ({ api }, [market, offerKey, qty], o, out) => {
  const data = await answer(
    api.POST('/api/v1/cart/items', {
      body: {
        market,
        offer_key: offerKey,
        qty: int(qty, 'qty'),
        ...(o.note ? { note: String(o.note) } : {}),
      } as never,
      params: { header: idem(o['idempotency-key'] as string | undefined) } as never,
    }),
  );
  print(out, data, () =>
    [
      `line ${data.item_id} in cart ${data.cart_id}: ${data.qty} (${data.status})${data.clamped ? ', clamped to max_qty' : ''}`,
      data.note,
      `checkout_url: ${data.checkout_url}`,
    ].join('\n'),
  );
};

/** A compact JWS: three base64url parts. */
const JWS = /^[\w-]+\.[\w-]+\.[\w-]+$/;

/** One line about an event's data: its most telling fields. */
function summary(data: unknown): string {
  if (typeof data !== 'object' || data === null) return String(data ?? '');
  const d = data as Record<string, unknown>;
  const keys = [
    'id',
    'market',
    'tick',
    'qty',
    'status',
    'total_amount',
    'amount',
    'realized_pnl',
    'kind',
    'reason',
  ].filter((k) => d[k] !== undefined && d[k] !== null);
  return keys
    .map((k) => `${k}=${typeof d[k] === 'object' ? JSON.stringify(d[k]) : d[k]}`)
    .join(' ')
    .slice(0, 200);
}

/** The events of a Server-Sent Events body (the `data:` JSON of each message; comments skipped). */
export async function* sseEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ id: number; type: string; created_at: number; data: unknown }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const message = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = message
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (data) yield JSON.parse(data);
    }
  }
}

// Run as a program (also through npm's bin link), not when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  const out: Out = { json: false, write: (line) => process.stdout.write(`${line}\n`) };
  process.exitCode = await run(process.argv.slice(2), process.env, out, (line) =>
    process.stderr.write(`${line}\n`),
  );
}
