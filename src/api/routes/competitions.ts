// Competitions (CONTRACT.md "Competitions"): the API list and one competition, the web pages
// (list, one with its leaderboard, rules and join form, the rules page /docs/competitions) and the
// holder's free entry, a turn of the competition's actor (competition:<id>).
import Type, { type Static } from 'typebox';
import {
  competitionRef,
  type CompetitionView,
  type Joined,
} from '../../../actors/competition/messages.js';
import { read } from '../../../actors/runtime/client.js';
import {
  COMPETITION,
  COMPETITION_WINDOW_SESSIONS,
  SETTLEMENT_HORIZON_SESSIONS,
} from '../../rules.js';
import { Competition, CompetitionJoinedForm, CompetitionsAnswer } from '../../schemas/index.js';
import { timesOf } from '../../web/competition-view.js';
import { holderOf } from '../../http/authenticators/holder-session.js';
import { renderPage } from '../../web/pages.js';
import {
  HttpError,
  htmlPage,
  json,
  route,
  type HolderContext,
  type PublicContext,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { formReply, usd, webAction, type Problem } from '../../web/answers.js';

/** Competitions the list answers (the running one of each market comes first). */
const LIST_LIMIT = 20;
// Any shape: an id that names no competition is a 404 whatever it looks like (CONTRACT.md "Strict requests").
const Params = Type.Object({
  id: Type.String({ minLength: 1, description: 'the competition (`<market>-<window>`)' }),
});
type Params = Static<typeof Params>;
/** What a competition id can look like; anything else names none (and never reaches an actor). */
const ID_SHAPE = /^[a-z0-9]{1,20}-[0-9]{1,15}$/;
const noCompetition = (id: string) =>
  new HttpError(404, `no competition ${id.length > 60 ? `${id.slice(0, 60)}…` : id}`);

const RULES = {
  starting_balance: usd(COMPETITION.startingBalanceCents / 100),
  prize_pool: usd(COMPETITION.prizePoolCents / 100),
  sponsor: COMPETITION.sponsor,
  shares: COMPETITION.prizeShares.join(' / '),
  horizon: SETTLEMENT_HORIZON_SESSIONS,
  windows: Object.entries(COMPETITION_WINDOW_SESSIONS).map(([market, sessions]) => ({
    market,
    sessions,
  })),
};

export function competitionRoutes(s: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/v1/competitions',
      operationId: 'list_competitions',
      auth: 'none',
      summary: 'Competitions: a running one on each market, with the top of each leaderboard',
      response: { 200: CompetitionsAnswer },
      handler: () => listCompetitions(s),
    }),
    route<Params>({
      method: 'GET',
      path: '/api/v1/competitions/{id}',
      operationId: 'get_competition',
      auth: 'none',
      summary: 'One competition with its whole leaderboard',
      params: Params,
      response: { 200: Competition },
      responses: { 404: { description: 'no such competition' } },
      handler: (c) => getCompetition(s, c),
    }),
    route({
      method: 'GET',
      path: '/competitions',
      auth: 'none',
      summary: 'Competitions page',
      response: { 200: htmlPage('the competitions') },
      handler: (c) => showCompetitions(s, c),
    }),
    route<Params>({
      method: 'GET',
      path: '/competitions/{id}',
      auth: 'none',
      summary: 'A competition: leaderboard, rules, join form',
      params: Params,
      response: { 200: htmlPage('the competition') },
      responses: { 404: { description: 'no such competition' } },
      handler: (c) => showCompetition(s, c),
    }),
    route({
      method: 'GET',
      path: '/docs/competitions',
      auth: 'none',
      summary: 'How competitions work',
      response: { 200: htmlPage('the competition rules') },
      handler: (c) => showCompetitionRules(s, c),
    }),
    route<Params>({
      method: 'POST',
      path: '/competitions/{id}/join',
      auth: 'holder',
      params: Params,
      summary:
        'Enter a competition (free): a competition account holding the starting balance in simulated USD; joining again answers the same account',
      response: { 200: CompetitionJoinedForm },
      responses: { 303: { description: 'browsers: sent on to the competition page' } },
      handler: (c) => joinCompetition(s, c),
      replay: (r: Joined, { req }) => joinedReply(req, r),
    }),
  ];
}

async function listCompetitions(s: Services): Promise<Reply> {
  return json({ competitions: await competitionList(s, COMPETITION.leaderboardInList) });
}

async function getCompetition(s: Services, { params }: PublicContext<Params>): Promise<Reply> {
  return json(await competitionOr404(s, params.id));
}

async function showCompetitions(s: Services, { req }: PublicContext): Promise<Reply> {
  const cs = (await competitionList(s, 3)).map((c) => ({
    ...c,
    prize: usd(c.prize_pool.amount),
    ...timesOf(c),
  }));
  return renderPage('competitions', {
    title: 'Competitions',
    holder: await holderOf(s, req),
    competitions: cs,
    crules: RULES,
  });
}

async function showCompetition(
  s: Services,
  { req, params }: PublicContext<Params>,
): Promise<Reply> {
  return competitionPage(s, req, await competitionOr404(s, params.id));
}

async function showCompetitionRules(s: Services, { req }: PublicContext): Promise<Reply> {
  return renderPage('docs-competitions', {
    title: 'Competition rules',
    holder: await holderOf(s, req),
    crules: RULES,
  });
}

function joinCompetition(
  s: Services,
  { req, params, principal, idem }: HolderContext<Params>,
): Promise<Reply> {
  const holder = principal;
  if (!ID_SHAPE.test(params.id)) throw noCompetition(params.id);
  return webAction(
    req,
    async () => {
      const r = await s.runtime.ask(
        competitionRef(params.id),
        { kind: 'join', holderId: holder.holderId, at: s.clock.realNow() },
        { idem },
      );
      return joinedReply(req, r);
    },
    async (p) => competitionPage(s, req, await competitionOr404(s, params.id), p),
  );
}

function competitionList(s: Services, leaderboard: number) {
  return read(s.runtime, 'competition.list', {
    at: s.clock.realNow(),
    leaderboard,
    limit: LIST_LIMIT,
  });
}

async function competitionOr404(s: Services, id: string): Promise<CompetitionView> {
  if (!ID_SHAPE.test(id)) throw noCompetition(id);
  const c = await read(s.runtime, 'competition.one', {
    id,
    at: s.clock.realNow(),
    leaderboard: COMPETITION.leaderboardMax,
  });
  if (!c) throw noCompetition(id);
  return c;
}

async function competitionPage(
  s: Services,
  req: RequestInfo,
  c: CompetitionView,
  p?: Problem,
): Promise<Reply> {
  return renderPage(
    'competition',
    {
      title: c.name,
      holder: await holderOf(s, req),
      c,
      crules: RULES,
      joinable: c.status !== 'finished',
      prize: usd(c.prize_pool.amount),
      start: usd(c.starting_balance),
      ...timesOf(c),
      has_leaders: c.leaderboard.length > 0,
      problem: p,
    },
    p?.status ?? 200,
  );
}

const joinedReply = (req: RequestInfo, r: Joined) =>
  formReply(req, `/competitions/${r.competition_id}`, {
    account_id: r.account_id,
    competition_id: r.competition_id,
  });
