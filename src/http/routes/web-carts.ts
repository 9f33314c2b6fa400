// An agent's cart link (SPEC.md "Web routes": GET /carts/{token}), handed out at registration. A
// holder who opens it while logged in connects the agent to their account (a turn of the agent's
// account actor); everyone sees the agent's declared identity and the orders waiting for a payment.
// Cart lines themselves (POST /cart/items) are the carts layer's; this page shows what exists.
import Type from 'typebox';
import type { Connected } from '../../../actors/account/messages.js';
import { read } from '../../../actors/runtime/client.js';
import { holderOf } from '../auth/holders.js';
import { renderPage } from '../pages.js';
import { htmlPage, route, type Route } from '../route.js';
import type { Services } from '../services.js';
import { usd } from '../web.js';

// A link's token (checkout, cart). Any token is looked up (an indexed miss is cheap): an unknown or
// malformed one is a 404 page, never a 422.
export const TokenParams = Type.Object({ token: Type.String({ minLength: 1 }) });

export type DeclaredAgent = { name: string; key_id: string; identity: Record<string, unknown> | null; operator: Record<string, unknown> | null; purpose: string | null; contact: string | null };

const declared = (v: unknown) => (typeof v === 'string' && v ? v : 'not declared');

/** The view of templates/agent-identity.mustache: what the agent declared about itself. */
export function identityView(a: DeclaredAgent) {
  return {
    agent_name: a.name, key_id: a.key_id, model: declared(a.identity?.model), operator_name: declared(a.operator?.name),
    operator_contact: declared(a.operator?.contact ?? a.contact), purpose: declared(a.purpose),
  };
}

export const utc = (unix: number) => `${new Date(unix * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

export function webCartRoutes(s: Services): Route[] {
  return [
    route<{ token: string }>({
      method: 'GET', path: '/carts/{token}', auth: 'none', summary: "An agent's cart link: connects the agent to the logged-in holder", params: TokenParams,
      response: { 200: htmlPage('the agent\'s identity and its orders waiting for payment') },
      handler: async ({ req, params }) => {
        const holder = await holderOf(s, req);
        const a = await read(s.runtime, 'agent.cart', { token: params.token });
        if (!a) return renderPage('message', { title: 'Cart not found', heading: 'Cart not found', message: 'No cart has this link: check the address the agent gave you.', is_error: true, holder }, 404);
        let connected = holder !== null && a.holder_id === holder.holderId;
        let connectedNow = false;
        if (holder && a.holder_id === null) {
          connected = (await s.runtime.ask<Connected>(`account:${a.account_id}`, { kind: 'connect', agentId: a.agent_id, holderId: holder.holderId })).connected;
          connectedNow = connected;
        }
        const now = s.clock.realNow();
        const waiting = connected
          ? (await read(s.runtime, 'account.orders', { accountIds: [a.account_id], status: 'awaiting_payment', limit: 100, baseUrl: s.config.baseUrl })).filter((o) => (o.closes_at as number) > now)
          : [];
        const orders = waiting.map((o) => ({
          deal_title: o.deal_title, market: o.market, tick: o.tick, qty: o.qty, total: usd(o.total_amount as number),
          closes: utc(o.closes_at as number), pay_path: new URL(o.purchase_url as string).pathname,
        }));
        return renderPage('cart-link', {
          title: `${a.name}'s cart`, holder, ...identityView(a), connected_now: connectedNow,
          other_holder: holder !== null && !connected, orders, has_orders: orders.length > 0, here_q: encodeURIComponent(`/carts/${params.token}`),
        });
      },
    }),
  ];
}
