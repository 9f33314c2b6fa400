// The holder's form posts answered as JSON (CONTRACT.md "Web form posts": a client that asks for
// JSON gets the outcome as an object instead of a 303).
import Type from 'typebox';
import { bool, int, list, num, obj, str, strOrNull } from './common.js';

const ok = Type.Literal(true, { description: 'the post succeeded' });

export const PaidForm = obj(
  {
    ok,
    order_ids: list(Type.Integer(), 'the orders paid'),
    round_id: int('their trade round'),
    already_paid: bool('true: the order was paid before; nothing was charged now'),
    charged: num('what was charged now'),
    fee: num('of it, the participation fee of the month'),
  },
  'the order is paid',
);

export const FundingForm = obj(
  { ok, agent_id: int('the agent'), autonomous_funding: bool('the switch as it is now') },
  'the autonomous-funding switch is set',
);

export const SignedInForm = obj(
  { ok, holder_id: int('the holder'), email: str('the holder\'s e-mail address'), display_name: strOrNull('the holder\'s display name'), next: str('the page to go to') },
  'signed in (the session cookie is set)',
);

export const LoggedOutForm = obj({ ok }, 'logged out (the session cookie is cleared)');
