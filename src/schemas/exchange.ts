// The exchange (CONTRACT.md "Exchange"): the public listings answer and the holder's form answers.
import Type from 'typebox';
import { Listing } from './account.js';
import { int, list, num, obj } from './common.js';

const ok = Type.Literal(true, { description: 'the post succeeded' });

export const ListingsAnswer = obj(
  { listings: list(Listing, 'open listings, newest first') },
  'open exchange listings',
);

export const ListedForm = obj({ ok, listing_id: int('the new listing') }, 'the item is listed');
export const ListingCancelledForm = obj(
  { ok, listing_id: int('the cancelled listing') },
  'the listing is cancelled',
);
export const BoughtForm = obj(
  {
    ok,
    item_id: int('the item, now yours (its id is kept)'),
    paid: num("the price paid, in the listing's currency"),
    fee: num(
      "the month's participation fee this purchase carried (USD; 0 when already charged, always 0 in Gold Coins)",
    ),
  },
  'the item is bought',
);
