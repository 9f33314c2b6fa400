// CompetitionActor ("competition:<id>", id `<market>-<window>`): owns one competition and its
// entries. The supervisor opens each market's current window (a unique id: two supervisors make
// it once) and finishes ended ones; finishing flips running → finished by a statement that finds
// it running, in the same transaction as the prize postings, so prizes are paid exactly once
// across restarts and processes. Holders join here: a competition account with simulated USD.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ActorError, defineActor } from '../runtime/actor.js';
import { instantSql, isUniqueViolation } from '../runtime/sql.js';
import { competitionStartEntries, postEntries, prizeEntries } from '../money/ledger.js';
import { manualDesk } from '../account/desk.js';
import { COMPETITION, prizeSplit } from '../../src/rules.js';
import { ranking } from './leaderboard.js';
import type {
  CompetitionMessage,
  CompetitionReplies,
  Finished,
  Joined,
  Opened,
} from './messages.js';

type State = { id: string };
type Row = {
  id: string;
  market: string;
  status: string;
  starts_at: number;
  ends_at: number;
  starting_balance_cents: number;
  prize_pool_cents: number;
};

async function competition(em: EntityManager, id: string, lock = false): Promise<Row | undefined> {
  const [row] = await em.execute<Row[]>(
    `select id, market, status, starts_at, ends_at, starting_balance_cents::float8 as starting_balance_cents, prize_pool_cents::float8 as prize_pool_cents
       from competition where id = ?${lock ? ' for update' : ''}`,
    [id],
  );
  return row;
}

export const competitionActor = defineActor<State, CompetitionMessage, CompetitionReplies>({
  kind: 'competition',
  activate: async (ctx) => ({ id: ctx.id }),
  handlers: {
    async open(state, msg, ctx): Promise<Opened> {
      await ctx.em.execute(
        `insert into competition (id, market, name, starts_at, ends_at, starting_balance_cents, prize_pool_cents, sponsor, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ${instantSql()}) on conflict (id) do nothing`,
        [
          state.id,
          msg.market,
          msg.name,
          msg.startsAt,
          msg.endsAt,
          COMPETITION.startingBalanceCents,
          COMPETITION.prizePoolCents,
          COMPETITION.sponsor,
          msg.at,
        ],
      );
      const due = await ctx.em.execute<{ id: string }[]>(
        `select id from competition where market = ? and status = 'running' and ends_at <= ? order by ends_at limit 100`,
        [msg.market, msg.at],
      );
      return { id: state.id, due: due.map((d) => d.id) };
    },

    async join(state, msg, ctx): Promise<Joined> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await ctx.em.transactional((em) => join(em, state.id, msg.holderId, msg.at));
        } catch (err) {
          // Another process entered this holder a moment earlier: the next attempt finds that entry.
          if (!isUniqueViolation(err) || attempt >= 2) throw err;
        }
      }
    },

    async finish(state, msg, ctx): Promise<Finished> {
      return ctx.em.transactional(async (em) => {
        const flipped = await em.execute<{ id: string }[]>(
          `update competition set status = 'finished', finished_at = ${instantSql()} where id = ? and status = 'running' and ends_at <= ? returning id`,
          [msg.at, state.id, msg.at],
        );
        if (!flipped.length) return { id: state.id, finished: false, prizes: [] };
        const c = (await competition(em, state.id))!;
        const split = prizeSplit(c.prize_pool_cents);
        // Only entrants who settled at least one trade are ranked for prizes: entering alone wins nothing.
        const top = (await ranking(em, state.id, COMPETITION.leaderboardMax))
          .filter((r) => r.settled > 0)
          .slice(0, split.length);
        const prizes = top.map((r, i) => ({
          rank: i + 1,
          account_id: r.account_id,
          holder_id: r.holder_id,
          amount_cents: split[i],
        }));
        const desks = await Promise.all(prizes.map((p) => manualDesk(em, p.holder_id)));
        await postEntries(
          em,
          prizeEntries(
            state.id,
            prizes.map((p, i) => ({ deskId: desks[i], cents: p.amount_cents })),
          ),
          msg.at,
        );
        for (const p of prizes)
          await em.execute(`update competition_entry set prize_cents = ? where account_id = ?`, [
            p.amount_cents,
            p.account_id,
          ]);
        return { id: state.id, finished: true, prizes };
      });
    },
  },
});

/** The holder's entry: the one they have, or a new competition account credited the starting balance. */
async function join(em: EntityManager, id: string, holderId: number, at: number): Promise<Joined> {
  const c = await competition(em, id);
  if (!c) throw new ActorError(404, `no competition ${id}`);
  const [had] = await em.execute<{ account_id: number }[]>(
    `select account_id::float8 as account_id from competition_entry where competition_id = ? and holder_id = ?`,
    [id, holderId],
  );
  if (had) return { ok: true, account_id: had.account_id, competition_id: id, joined: false };
  if (c.status !== 'running' || at >= c.ends_at)
    throw new ActorError(
      409,
      `competition ${id} has ended; join the running competition of market ${c.market}`,
    );
  const [acc] = await em.execute<{ id: number }[]>(
    `insert into account (holder_id, kind, created_at) values (?, 'competition', ${instantSql()}) returning id::float8 as id`,
    [holderId, at],
  );
  await em.execute(
    `insert into competition_entry (account_id, competition_id, holder_id, created_at) values (?, ?, ?, ${instantSql()})`,
    [acc.id, id, holderId, at],
  );
  await postEntries(em, competitionStartEntries(acc.id, id, c.starting_balance_cents), at);
  return { ok: true, account_id: acc.id, competition_id: id, joined: true };
}
