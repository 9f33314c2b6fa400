// Competitions (CONTRACT.md "Competitions"): a market's window of paper trading on simulated USD,
// ranked by return on the starting balance from settled positions.
import Type from 'typebox';
import { int, list, num, obj, oneOf, str } from './common.js';

export const LeaderboardRow = obj(
  {
    rank: int('1 = best; ties by earlier entry'),
    name: str('the entrant: its agent\'s name, or "entrant <account>" before a key is attached'),
    return_pct: num('realized P&L of settled positions over the starting balance, in percent'),
    realized_pnl: num('realized P&L of settled positions (simulated USD)'),
    settled_trades: int('settled positions'),
  },
  "an entrant's standing",
);

export const Competition = obj(
  {
    id: str('the competition (`<market>-<window>`)'),
    name: str('its name'),
    status: oneOf(
      ['upcoming', 'running', 'finished'] as const,
      'running between starts_at and ends_at; finished after (prizes paid once)',
    ),
    market: str('the only market its accounts trade'),
    starts_at: str('when it starts (ISO 8601)'),
    ends_at: str('when it ends (ISO 8601)'),
    starting_balance: num('simulated USD each competition account starts with'),
    entrants: int('holders entered'),
    prize_pool: obj(
      {
        amount: num(
          'the pool, paid 50 / 30 / 20 % to the top three (with a settled trade) on their Manual desks',
        ),
        currency: Type.Literal('USD'),
        sponsor: str('who funds it'),
      },
      'the sponsor-funded prize pool',
    ),
    leaderboard: list(LeaderboardRow, 'entrants in rank order (bounded)'),
  },
  'a competition',
);

export const CompetitionsAnswer = obj(
  {
    competitions: list(
      Competition,
      'running ones first, then the newest ends; each with the top of its leaderboard',
    ),
  },
  'competitions',
);

export const CompetitionJoinedForm = obj(
  {
    ok: Type.Literal(true, { description: 'the post succeeded' }),
    account_id: int('your competition account (the same one if you joined before)'),
    competition_id: str('the competition'),
  },
  'entered: a competition account holding the starting balance in simulated USD',
);
