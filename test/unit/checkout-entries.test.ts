// What a checkout books (actors/money/charge.ts chargeEntries), as properties: a card charge
// covers exactly what is debited (the account nets to zero), a balance payment nets to minus the
// purchases and the fee; each purchase is debited under its own ref; the fee at most once.
import fc from 'fast-check';
import t from 'tap';
import { chargeBatch, chargeEntries } from '../../actors/money/charge.js';

const debitsArb = fc.array(
  fc.record({
    ref: fc.string({ minLength: 1, maxLength: 12 }),
    cents: fc.integer({ min: 1, max: 50_000_000 }),
  }),
  { minLength: 1, maxLength: 20 },
);

t.test('card and balance checkouts', async () => {
  fc.assert(
    fc.property(
      debitsArb,
      fc.constantFrom(0, 1500),
      fc.constantFrom('card' as const, 'balance' as const),
      (debits, fee, method) => {
        const entries = chargeEntries(42, debits, fee, method, 'cart:9');
        const total = debits.reduce((s, d) => s + d.cents, 0);
        const net = entries.reduce((s, e) => s + e.amount_cents, 0);
        if (net !== (method === 'card' ? 0 : -(total + fee))) return false;
        const charges = entries.filter((e) => e.kind === 'card_charge');
        if (charges.length !== (method === 'card' ? 1 : 0)) return false;
        if (
          method === 'card' &&
          (charges[0].amount_cents !== total + fee ||
            charges[0].ref !== 'cart:9' ||
            entries[0] !== charges[0])
        )
          return false;
        const orderDebits = entries.filter((e) => e.kind === 'order_debit');
        if (
          orderDebits.map((e) => [e.ref, -e.amount_cents]).join() !==
          debits.map((d) => [d.ref, d.cents]).join()
        )
          return false;
        if (entries.filter((e) => e.kind === 'monthly_fee').length !== (fee ? 1 : 0)) return false;
        return entries.every(
          (e) =>
            e.account_id === 42 && Number.isSafeInteger(e.amount_cents) && e.amount_cents !== 0,
        );
      },
    ),
    { numRuns: 2000 },
  );
});

t.test(
  'a checkout over several accounts: a card leaves each as it was, the fee lands on the payer alone',
  async () => {
    const accountsArb = fc.array(
      fc.record({
        account: fc.integer({ min: 1, max: 4 }),
        ref: fc.string({ minLength: 1, maxLength: 8 }),
        cents: fc.integer({ min: 1, max: 1_000_000 }),
      }),
      { minLength: 1, maxLength: 12 },
    );
    fc.assert(
      fc.property(
        accountsArb,
        fc.constantFrom(0, 1500),
        fc.constantFrom('card' as const, 'balance' as const),
        (debits, fee, method) => {
          const payer = debits[0].account;
          const entries = chargeEntries(payer, debits, fee, method, 'cart:5');
          for (const account of new Set(debits.map((d) => d.account))) {
            const mine = entries.filter((e) => e.account_id === account);
            const spent =
              debits.filter((d) => d.account === account).reduce((s, d) => s + d.cents, 0) +
              (account === payer ? fee : 0);
            const net = mine.reduce((s, e) => s + e.amount_cents, 0);
            if (net !== (method === 'card' ? 0 : -spent)) return false;
            if (
              method === 'card' &&
              mine
                .filter((e) => e.kind === 'card_charge')
                .map((e) => e.amount_cents)
                .join() !== String(spent)
            )
              return false;
          }
          const fees = entries.filter((e) => e.kind === 'monthly_fee');
          return (
            fees.length === (fee ? 1 : 0) &&
            fees.every((e) => e.account_id === payer && e.amount_cents === -fee)
          );
        },
      ),
      { numRuns: 1000 },
    );
  },
);

t.test("an order's funding is a checkout of that order alone", async (t) => {
  t.same(chargeEntries(3, [{ ref: 'order:17', cents: 1250 }], 1500, 'card', 'order:17'), [
    { account_id: 3, kind: 'card_charge', amount_cents: 2750, ref: 'order:17' },
    { account_id: 3, kind: 'order_debit', amount_cents: -1250, ref: 'order:17' },
    { account_id: 3, kind: 'monthly_fee', amount_cents: -1500, ref: 'order:17' },
  ]);
  t.same(chargeBatch([{ accountId: 3, orderId: 17, totalCents: 1250, feeCents: 0 }]), [
    { account_id: 3, kind: 'order_debit', amount_cents: -1250, ref: 'order:17' },
  ]);
});
