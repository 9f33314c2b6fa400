// Bounds: lists without a `limit` parameter stop at their documented caps (LIST_CAPS), and
// a shard count whose connection pools the database cannot serve stops start-up with a
// configuration error and exit code 2 (the embedded server is started with room for any count:
// test/api/embedded.test.ts).
import t from 'tap';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { LIST_CAPS } from '../../../src/rules.js';
import { budgetProblem, connectionBudget, connectionLimit } from '../../../orm/connections.js';
import { openOrm } from '../../../orm/database.js';
import { instantSql } from '../../../actors/runtime/sql.js';
import { freshDatabase } from '../../helpers/db.js';
import { registerAgent } from '../../helpers/agents.js';
import { getPage, postForm, registerHolder, sharedWebService } from '../../helpers/web.js';
import { productionEnv } from '../../helpers/child-env.js';

const MAIN = path.resolve('dist/src/main.js');

t.test(
  'lists stop at their caps; an agent beyond the console cap can still be switched',
  async (t) => {
    const svc = await sharedWebService();
    const db = (sql: string, params: unknown[] = []) => svc.orm.em.fork().execute(sql, params);
    const { cookie, holderId } = await registerHolder(svc, 'many@example.com');

    const n = LIST_CAPS.agents + 1;
    // The bulk rows are stamped with the service clock's now.
    const at = svc.services.clock.realNow();
    const agents = await db(
      `with a as (insert into account (holder_id, created_at) select null, ${instantSql()} from generate_series(1, ?) returning id)
     insert into agent (key_id, key_hash, name, recall_phrase, account_id, holder_id, created_at)
     select lpad(id::text, 20, 'k'), 'x', 'bulk ' || id, 'phrase', id, ?, ${instantSql()} from a returning id::float8 as id`,
      [at, n, holderId, at],
    );
    const page = await getPage(svc, '/console/agents', { cookie });
    t.equal(page.status, 200);
    t.equal(
      page.text.match(/action="\/console\/agents\/\d+\/funding"/g)?.length,
      LIST_CAPS.agents,
      `the agents page lists ${LIST_CAPS.agents}`,
    );
    const last = Math.max(...agents.map((a) => a.id as number));
    t.notMatch(page.text, `/console/agents/${last}/funding`, 'the newest is beyond the cap');
    const off = await postForm(
      svc,
      `/console/agents/${last}/funding`,
      { enabled: 'off' },
      { cookie, json: true },
    );
    t.equal(off.status, 200, 'and still found by its id');

    // Owned goods without their positions (shaped as minted goods: the served item is checked against its schema).
    const ITEM = {
      history: {
        market: 'h2',
        sku_family: 'f',
        cluster: 0,
        ticks: [],
        price_close: [],
        vwap: [],
        sold: [],
        velocity: [],
      },
      economy: {
        currency: 'USD',
        units: 1,
        unit_cost: 1,
        list_price: 2,
        cost_value: 1,
        list_value: 2,
      },
      provenance: [
        {
          kind: 'settlement',
          market: 'h2',
          tick: 1,
          offer_key: 'k',
          order_id: 1,
          position_id: 0,
          round_id: 1,
          settled_tick: 9,
        },
      ],
    };
    // Owned goods without their positions (the foreign key dropped in this test's own database).
    const agent = await registerAgent(svc);
    await db('alter table inventory_item drop constraint inventory_item_position_id_fkey');
    await db(
      `insert into inventory_item (account_id, position_id, market, cluster, title, qty, story, rarity, rarity_score, history, economy, source, provenance, created_at)
     select ?, g, 'h2', 0, 'item ' || g, 1, '', 'common', 0, ?::jsonb, ?::jsonb, 'settlement',
            jsonb_set(?::jsonb, '{0,position_id}', to_jsonb(g)), ${instantSql()} from generate_series(1, ?) g`,
      [
        agent.accountId,
        JSON.stringify(ITEM.history),
        JSON.stringify(ITEM.economy),
        JSON.stringify(ITEM.provenance),
        at,
        LIST_CAPS.inventory + 5,
      ],
    );
    const inv = await agent.get('/api/v1/inventory');
    t.equal(inv.status, 200);
    t.equal(inv.body.items.length, LIST_CAPS.inventory, `inventory lists ${LIST_CAPS.inventory}`);
    t.equal(inv.body.items[0].title, `item ${LIST_CAPS.inventory + 5}`, 'newest first');
  },
);

t.test('the connection budget', async (t) => {
  t.equal(connectionBudget(64).total, 64 * connectionBudget(1).perShard + connectionBudget(1).main);
  const tooMany = budgetProblem(64, 97);
  t.match(
    tooMany,
    /^SVC_SHARDS=64 needs up to \d+ database connections .* more than the 97 PostgreSQL allows .*; set SVC_SHARDS to at most \d+ or raise max_connections$/,
  );
  const fits = Number(/at most (\d+) or/.exec(tooMany!)![1]);
  t.equal(budgetProblem(fits, 97), undefined, `${fits} shards fit`);
  t.ok(budgetProblem(fits + 1, 97), `${fits + 1} do not`);
});

/** Runs `node dist/src/main.js` with `env` until it exits; resolves with its exit code and stderr. */
function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: productionEnv({ PORT: '0', LOG_LEVEL: 'warn', ...env }, ['DATABASE_URL', 'DATA_DIR']),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000); // a guard that kills a hung child (exit code null then fails the test)
  return new Promise((resolve) =>
    child.once('exit', (code) => (clearTimeout(timer), resolve({ code, stderr }))),
  );
}

t.test('too many shards for PostgreSQL: configuration error, exit 2', async (t) => {
  const url = await freshDatabase(t);
  // Whether the refusal is due is read from the server, not inferred from a process that kept running.
  const orm = await openOrm(url, 1);
  const limit = await connectionLimit(orm).finally(() => orm.close());
  if (!budgetProblem(64, limit))
    return t.skip(`this server allows enough connections for 64 shards (${limit})`);
  const r = await runMain({ DATABASE_URL: url, SVC_SHARDS: '64' });
  t.equal(r.code, 2, r.stderr);
  t.match(
    r.stderr,
    /^configuration error: SVC_SHARDS=64 needs up to \d+ database connections .* PostgreSQL allows .* raise max_connections/,
  );
});
