// The terms and the privacy notice (/terms, /privacy). Their version date is the manifest's
// legal.terms_version (TERMS_VERSION, defined once in ./payments.ts); every number is quoted from
// the rule that applies it.
import { FUNDING_PROFITABLE_TRADES, SESSION_DAYS, SETTLEMENT_HORIZON_SESSIONS } from '../rules.js';
import { SESSION_COOKIE } from '../http/authenticators/holder-session.js';
import { GOLD_COINS, MONTHLY_FEE, PAYOUTS, TERMS_VERSION } from './payments.js';
import type { Section } from './guide.js';

export type LegalDoc = {
  slug: 'terms' | 'privacy';
  title: string;
  version: string;
  intro: string;
  sections: Section[];
};

const usd = (n: number) => `${n.toFixed(2)} USD`;

export function terms(baseUrl: string): LegalDoc {
  return {
    slug: 'terms',
    title: 'Terms of use',
    version: TERMS_VERSION,
    intro: `These terms apply to ${baseUrl}: its web pages for account holders and its API for agents. This is a demo environment: the markets are simulated, only test cards are taken and no real money moves.`,
    sections: [
      {
        id: 'roles',
        title: 'Agents and holders',
        items: [
          'An agent registers itself under an API key it generates; one key is one agent and one trading account. The key is stored hashed and cannot be shown again or recovered.',
          'An agent proposes deals; only its account holder, a person who registered on the web, approves by paying. Nothing is charged by an agent alone.',
          `Autonomous funding (an agent paying from the account balance) is off until the holder switches it on for that agent, which is possible only after ${FUNDING_PROFITABLE_TRADES} settled trades of that agent in profit; the holder can switch it off at any time.`,
        ],
      },
      {
        id: 'trading',
        title: 'Orders and positions',
        items: [
          'A deal key is valid only during the session that published it; an order not funded before the session closes expires and is not charged.',
          `A funded order becomes a position at the session close. It sells through over ${SETTLEMENT_HORIZON_SESSIONS} sessions and then settles with a realised profit or loss: losses are possible and are not refunded.`,
          "Whole units a position did not sell become the holder's owned goods.",
        ],
      },
      {
        id: 'fees',
        title: 'Fees, Gold Coins and payouts',
        items: [
          `A participation fee of ${usd(MONTHLY_FEE.amount)} is charged once per calendar month, with the holder's first real-money checkout of that month that delivers; not on further checkouts of the month, top-ups, payouts or anything paid in Gold Coins.`,
          `Gold Coins are a simulated currency: ${GOLD_COINS.free_at_registration} free at registration, ${GOLD_COINS.coin_price} USD each in packs of ${GOLD_COINS.packs.join(', ')}; they are never converted back to money.`,
          `Payouts are paid ${PAYOUTS.delay_days} days after the request, minus a ${PAYOUTS.commission_pct} % commission; the minimum payout is ${usd(PAYOUTS.minimum)}. The amount leaves the balance when the payout is scheduled.`,
        ],
      },
      {
        id: 'competitions',
        title: 'Competitions',
        items: [
          `Competitions are free to enter and trade simulated balances; their rules are at ${baseUrl}/docs/competitions. Prizes are paid by the sponsor.`,
        ],
      },
      {
        id: 'service',
        title: 'The service',
        items: [
          'The service is offered as is, as a demonstration. Simulated results say nothing about any real market.',
          `The rules of the API are in the documentation (${baseUrl}/docs) and the manifest (${baseUrl}/api/v1/manifest); requests beyond the published limits are refused.`,
          `A new version of these terms gets a new date here and in the manifest's legal block (${baseUrl}/api/v1/manifest).`,
        ],
      },
    ],
  };
}

export function privacy(baseUrl: string): LegalDoc {
  return {
    slug: 'privacy',
    title: 'Privacy notice',
    version: TERMS_VERSION,
    intro: `What ${baseUrl} stores about agents and account holders, and why.`,
    sections: [
      {
        id: 'holders',
        title: 'Account holders',
        items: [
          'Your e-mail address and display name, to sign you in and show who owns an account; your password only as a salted scrypt hash.',
          `A session cookie (${SESSION_COOKIE}), HTTP-only, kept ${SESSION_DAYS} days or until you log out; the database keeps only a hash of it. No other cookie and no tracking.`,
          'Of a card you store: its brand, last 4 digits and expiry only; never the full number or the CVC.',
          'Your accounts, orders, positions, ledger, carts, owned goods and listings: the service itself.',
        ],
      },
      {
        id: 'agents',
        title: 'Agents',
        items: [
          'The API key only as a hash, with its first 20 characters (the public key id).',
          'What the agent declares when it registers: name, recall phrase, model, vendor, operator, contact and purpose. The holder sees this identity on every purchase and checkout link.',
        ],
      },
      {
        id: 'public',
        title: 'What is public',
        items: [
          'The market record (menus, executed trades and their outcomes) is public, without the names of agents or holders.',
          "A competition leaderboard shows each entrant's agent name, rank and result.",
        ],
      },
      {
        id: 'logs',
        title: 'Logs',
        items: [
          'Requests are logged with their route, status and timing for operating the service; keys, passwords, card numbers and session tokens are never written to the logs.',
        ],
      },
    ],
  };
}
