// Compile-time checks of typed actor references (actors/runtime/protocol.ts ActorRef, each kind's
// reply map in its messages.ts). Never run: `npm run build` type-checks this file (tsconfig.json
// includes test/types), so a line marked `@ts-expect-error` that compiles fails the build (TS2578),
// and test/unit/actor-refs-types.test.ts shows that it does.
import type { ActorRuntime } from '../../actors/runtime/client.js';
import { defineActor } from '../../actors/runtime/actor.js';
import {
  accountRef,
  type AccountMessage,
  type FundingSet,
  type OrderPlaced,
  type Paid,
} from '../../actors/account/messages.js';
import { cartRef, type LineAdded, type NewLine } from '../../actors/cart/messages.js';
import { holderRef, type HolderSession } from '../../actors/holder/messages.js';
import { marketRef, type CloseReply } from '../../actors/market/messages.js';
import {
  payoutsRef,
  type PaidOut,
  type PayoutsMessage,
  type PayoutsReplies,
} from '../../actors/payouts/messages.js';
import type { Replies } from '../../actors/runtime/protocol.js';

/** True when A and B are the same type (not merely assignable). */
type Equal<A, B> =
  (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
const same = <A, B>(_proof: Equal<A, B>) => {};

const line: NewLine = {
  market: 'm15',
  tick: 1,
  idx: 0,
  offerKey: 'k',
  qty: 1,
  maxQty: 1,
  note: '',
  closesAt: 0,
};
const pay = {
  kind: 'pay',
  orderId: 1,
  holderId: 2,
  payment: { method: 'balance' },
  at: 0,
} as const;

export async function checks(rt: ActorRuntime): Promise<void> {
  // The reply is the one declared for the message's kind.
  const paid = () =>
    rt.ask(accountRef(1), {
      kind: 'pay',
      orderId: 1,
      holderId: 2,
      payment: { method: 'balance' },
      at: 0,
    });
  same<Awaited<ReturnType<typeof paid>>, Paid>(true);
  const placed = await rt.ask(
    accountRef(1),
    {
      kind: 'order',
      agentId: 1,
      market: 'm15',
      tick: 1,
      idx: 0,
      offerKey: 'k',
      qty: 1,
      closesAt: 0,
      at: 0,
      payFromBalance: false,
      baseUrl: '',
    },
    { grouped: true },
  );
  same<typeof placed, OrderPlaced>(true);
  const added = () =>
    rt.ask(cartRef(3), { kind: 'add', caller: { kind: 'holder', holderId: 2 }, line, at: 0 });
  same<Awaited<ReturnType<typeof added>>, LineAdded>(true);
  const session = () => rt.ask(holderRef('a@b.c'), { kind: 'resume', holderId: 2 });
  same<Awaited<ReturnType<typeof session>>, HolderSession>(true);
  const closed = () => rt.ask(marketRef('m15'), { kind: 'close', tick: 4 });
  same<Awaited<ReturnType<typeof closed>>, CloseReply>(true);
  const due = () => rt.ask(payoutsRef, { kind: 'payDue', at: 0 });
  same<Awaited<ReturnType<typeof due>>, PaidOut>(true);

  // A message of another kind's union.
  // @ts-expect-error a cart's message to an account
  await rt.ask(accountRef(1), { kind: 'add', caller: { kind: 'holder', holderId: 2 }, line });
  // @ts-expect-error an account's message to a cart
  await rt.ask(cartRef(3), pay);
  // @ts-expect-error a kind the account has no handler for
  await rt.ask(accountRef(1), { kind: 'sweep' });

  // A message of the right kind with wrong or missing fields.
  // @ts-expect-error `pay` needs orderId, holderId, payment and at
  await rt.ask(accountRef(1), { kind: 'pay', orderId: 1 });
  // @ts-expect-error no field `amount` on `pay`
  await rt.ask(accountRef(1), { ...pay, amount: 5 });

  // A wrong reply type.
  // @ts-expect-error `pay` answers Paid, not FundingSet
  const wrong: FundingSet = await rt.ask(accountRef(1), pay);
  const funding = { kind: 'funding', agentId: 1, holderId: 2, enabled: true } as const;
  // @ts-expect-error the reply of `funding` has no order_id
  (await rt.ask(accountRef(1), funding)).order_id;
  // @ts-expect-error the old explicit reply type argument is gone with the string address
  await rt.ask<Paid>(accountRef(1), pay);

  // Addresses come from the kinds' helpers only.
  // @ts-expect-error a hand-written address
  await rt.ask('account:1', pay);
  // @ts-expect-error a cart's address is no account's
  const notAnAccount: ReturnType<typeof accountRef> = cartRef(1);
  // @ts-expect-error account ids are numbers
  accountRef('1');
  void wrong;
  void notAnAccount;
}

// A reply map names every message kind.
// @ts-expect-error `payout`, `topup`, ... missing
export const partial: Replies<AccountMessage> = { pay: null, order: null };

// Handlers answer the replies their kind declares: the map and the handlers cannot drift.
export const drifted = defineActor<Record<string, never>, PayoutsMessage, PayoutsReplies>({
  kind: 'payouts-check',
  activate: async () => ({}),
  handlers: {
    // @ts-expect-error payDue answers PaidOut ({ paid: number[] }), not a count
    async payDue() {
      return { paid: 3 };
    },
  },
});
