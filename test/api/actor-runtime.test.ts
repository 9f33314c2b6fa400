// The actor runtime against a real database: turns of one actor never interleave, turns of
// different actors overlap, refusals are clean 503s, and a worker killed under load loses no
// acknowledged write while its actors come back from the database.
import t from 'tap';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ActorRuntime, type RuntimeOptions } from '../../actors/runtime/shards.js';
import { ActorError } from '../../actors/runtime/actor.js';
import { actorRef, shardOf } from '../../actors/runtime/protocol.js';
import { freshDatabase } from '../helpers/db.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(210); // 8 runtimes, 16 workers

const COUNTER = pathToFileURL(path.resolve('test/fixtures/counter-actor.mjs')).href;

/** Start and end of a held turn, in steps of the worker's logical clock. */
type Span = { start: number; end: number };
/** The fixture's messages; `nope` has no handler there (a refused turn). */
type CounterMessage =
  | { kind: 'increment'; pauseMs?: number }
  | { kind: 'read' }
  | { kind: 'hold'; ms: number }
  | { kind: 'meet'; name: string; parties: number }
  | { kind: 'heapLimit' }
  | { kind: 'nope' };
type CounterReplies = {
  increment: { n: number };
  read: { n: number };
  hold: Span;
  meet: { met: number };
  heapLimit: { mb: number };
  nope: never;
};
/** The address of the fixture's counter `id` (test/fixtures/counter-actor.mjs). */
const counter = (id: string) => actorRef<CounterMessage, CounterReplies>('counter', id);

async function runtime(tt: Tap.Test, over: Partial<RuntimeOptions> = {}): Promise<ActorRuntime> {
  const rt = new ActorRuntime({
    shards: 2,
    databaseUrl: await freshDatabase(tt),
    poolMax: 8,
    seed: 1,
    baseUrl: 'http://svc.test',
    idleMs: 60_000,
    logLevel: 'silent',
    // A loaded CI machine (browser tests, benches beside) can be slow through 1000 queued turns.
    askTimeoutMs: 60_000,
    mailboxLimit: 100_000,
    extraActorModules: [COUNTER],
    // The counter stores no instant; the runtime still stamps every message with one.
    clock: () => 1_800_000_000,
    ...over,
  });
  tt.teardown(() => rt.close());
  return rt;
}

/** Two distinct actor ids that hash to the same shard (so overlap happens inside one worker). */
function sameShardIds(shards: number): [ReturnType<typeof counter>, ReturnType<typeof counter>] {
  const first = counter('a0');
  for (let i = 1; ; i++)
    if (shardOf(counter(`a${i}`), shards) === shardOf(first, shards))
      return [first, counter(`a${i}`)];
}

t.test('1000 concurrent increments of one persisted counter end at exactly 1000', async (tt) => {
  const rt = await runtime(tt);
  const replies = await Promise.all(
    Array.from({ length: 1000 }, () => rt.ask(counter('one'), { kind: 'increment' })),
  );
  const seen = new Set(replies.map((r) => r.n));
  tt.equal(seen.size, 1000, 'every turn saw a distinct value: no two turns interleaved');
  tt.equal(Math.max(...seen), 1000);
  // A fresh runtime reads the persisted value, not a cached one.
  await rt.close();
  const again = new ActorRuntime({ ...(rt as any).opts });
  tt.teardown(() => again.close());
  tt.same(await again.ask(counter('one'), { kind: 'read' }), { n: 1000 }, 'persisted');
});

t.test('each worker runs under the old-generation heap cap it was given', async (tt) => {
  const capped = await runtime(tt, { workerHeapMb: 96 });
  const [a, b] = [0, 1].map((shard) => {
    for (let i = 0; ; i++) if (shardOf(counter(`h${i}`), 2) === shard) return counter(`h${i}`);
  });
  for (const id of [a, b]) {
    const { mb } = await capped.ask(id, { kind: 'heapLimit' });
    // The limit V8 reports is the old generation plus the young one (a few MB to tens of MB).
    tt.ok(mb >= 96 && mb < 200, `${id}: heap limit ${Math.round(mb)} MB with a 96 MB cap`);
  }
  const free = await runtime(tt);
  const { mb } = await free.ask(a, { kind: 'heapLimit' });
  tt.ok(mb > 200, `without a cap, V8's default (${Math.round(mb)} MB)`);
});

t.test('turns of two actors overlap; turns of one actor do not', async (tt) => {
  const rt = await runtime(tt);
  const [a, b] = sameShardIds(2);
  // Each turn waits at a barrier for the other: both answer only if they run at the same time (if
  // the worker ran them one after another, the first would wait until its ask timed out).
  const met = await Promise.all([
    rt.ask(a, { kind: 'meet', name: 'two-actors', parties: 2 }),
    rt.ask(b, { kind: 'meet', name: 'two-actors', parties: 2 }),
  ]);
  tt.same(met, [{ met: 2 }, { met: 2 }], 'different actors on one shard overlap');
  // Start and end are steps of the worker's logical clock: the later turn starts after the earlier ended.
  const [p, q] = await Promise.all([
    rt.ask(a, { kind: 'hold', ms: 150 }),
    rt.ask(a, { kind: 'hold', ms: 150 }),
  ]);
  const [first, second] = p.start <= q.start ? [p, q] : [q, p];
  tt.ok(
    second.start > first.end,
    `the same actor runs its turns one after another (${JSON.stringify([first, second])})`,
  );
});

t.test('grouped asks travel to their shard together and each gets its own answer', async (tt) => {
  const rt = await runtime(tt);
  const ids = Array.from({ length: 20 }, (_, i) => counter(`g${i}`));
  // asked in one event-loop turn: one message per shard, two turns per actor
  const asks = ids.flatMap((id) =>
    [0, 1].map(() => rt.ask(id, { kind: 'increment' }, { grouped: true })),
  );
  const refused = rt.ask(counter('g0'), { kind: 'nope' }, { grouped: true }).then(
    () => undefined,
    (e: unknown) => e,
  );
  const replies = await Promise.all(asks);
  tt.same(
    replies.map((r) => r.n),
    ids.flatMap(() => [1, 2]),
    "each ask gets its own reply; one actor's grouped turns run in the order asked",
  );
  const err = await refused;
  tt.ok(
    err instanceof ActorError && err.status === 500,
    "a refusal in a group is that ask's alone",
  );
  tt.same(await rt.ask(counter('g5'), { kind: 'read' }), { n: 2 }, 'persisted');
});

t.test('an actor that does not answer in time gives 503 with a detail', async (tt) => {
  const rt = await runtime(tt);
  const [slow, other] = sameShardIds(2);
  // The turn waits at a barrier nobody else reaches before the ask has timed out: it cannot answer in time.
  const err = await rt.ask(slow, { kind: 'meet', name: 'late', parties: 2 }, 100).catch((e) => e);
  tt.ok(err instanceof ActorError, 'ActorError');
  tt.equal(err.status, 503);
  tt.match(err.detail, /did not answer within 100 ms/);
  tt.ok(err.retryAfter > 0, 'carries Retry-After');
  tt.same(
    await rt.ask(other, { kind: 'meet', name: 'late', parties: 2 }),
    { met: 2 },
    'the timed-out turn was still running; it ends now',
  );
});

t.test(
  'a full shard refuses new messages with 503 instead of queueing without bound',
  async (tt) => {
    const rt = await runtime(tt, { mailboxLimit: 5, shards: 1 });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => rt.ask(counter(`q${i}`), { kind: 'hold', ms: 100 })),
    );
    const refused = results
      .filter((r) => r.status === 'rejected')
      .map((r) => (r as PromiseRejectedResult).reason);
    tt.equal(results.length - refused.length, 5, 'exactly the bound was accepted');
    tt.ok(
      refused.every((e) => e instanceof ActorError && e.status === 503),
      'the rest were refused with 503',
    );
  },
);

t.test(
  'a worker killed under load loses no acknowledged write; its actors come back',
  async (tt) => {
    const rt = await runtime(tt);
    const id = counter('crash');
    const shard = rt.shardOf(id);
    const acked: number[] = [];
    let refused = 0;
    // The kill comes with the 50th acknowledgement: 350 turns are still queued or running then.
    let killed: Promise<unknown> | undefined;
    const sends = Array.from({ length: 400 }, () =>
      rt.ask(id, { kind: 'increment', pauseMs: 1 }).then(
        (r) => {
          acked.push(r.n);
          if (acked.length === 50) killed = rt.killWorker(shard);
        },
        (e) => {
          if (e instanceof ActorError && e.status === 503) refused++;
          else throw e;
        },
      ),
    );
    await Promise.all(sends);
    tt.ok(killed, 'the worker was killed under load');
    await killed;
    tt.ok(refused > 0, `turns in flight at the kill were refused with 503 (${refused})`);
    tt.equal(new Set(acked).size, acked.length, 'no value was acknowledged twice');
    const { n } = await rt.ask(id, { kind: 'read' });
    tt.ok(
      n >= Math.max(...acked),
      `the database holds every acknowledged increment (db ${n}, max acked ${Math.max(...acked)})`,
    );
    tt.ok(n <= 400, 'and nothing was applied twice');
    tt.same(
      await rt.ask(id, { kind: 'increment' }),
      { n: n + 1 },
      'the next request to the actor succeeds',
    );
    tt.ok(rt.stats()[shard].restarts >= 1, 'the restart is counted');
  },
);
