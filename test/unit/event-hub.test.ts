// The event hub (src/events/hub.ts) against a log it reads through a stand-in runtime: every
// stream is handed each event past its own id once, in order, as the read brought its text, also when
// it subscribes from an older id while a read of its account is in flight (it is read again from its
// own id, not handed the later events), with its types filter, and a stream without room waits
// without holding back the others of its account: resumed, it reads on from its own id; still waiting
// at two keep-alives in a row, it is closed as behind.
import t from 'tap';
import pino from 'pino';
import type { ActorRuntime, NotifyListener } from '../../actors/runtime/client.js';
import type { EventText, ManyArgs, ManyReply } from '../../actors/events/messages.js';
import { EVENTS_CHANNEL } from '../../actors/events/messages.js';
import { EventHub, perEvent, type AccountStream } from '../../src/events/hub.js';

const ACCOUNT = 7;
const ev = (id: number, type: EventText['type'] = 'order.created'): EventText => ({
  id,
  type,
  json: `{"id":${id},"type":"${type}"}`,
});

/** A log of one account, read by `events.many`; each read waits until the test releases it. */
function fakeLog() {
  const log: EventText[] = [];
  const reads: { args: ManyArgs; release: () => void }[] = [];
  const runtime = {
    read: (name: string, args: ManyArgs) => {
      if (name !== 'events.many') return Promise.resolve({});
      return new Promise<ManyReply>((resolve) => {
        reads.push({
          args,
          release: () => {
            const out: ManyReply = {};
            for (const a of args.accounts)
              out[a.accountId] = {
                events:
                  a.accountId === ACCOUNT
                    ? log.filter((e) => e.id > a.after).slice(0, args.limit)
                    : [],
              };
            resolve(out);
          },
        });
      });
    },
  } as unknown as ActorRuntime;
  const handlers = new Map<string, (payload: string) => void>();
  const listener = {
    listen: async (channel: string, fn: (p: string) => void) => (
      handlers.set(channel, fn),
      () => {}
    ),
  } as unknown as NotifyListener;
  return {
    log,
    reads,
    runtime,
    listener,
    notify: () => handlers.get(EVENTS_CHANNEL)!(String(ACCOUNT)),
  };
}

/** Lets the hub's promises run. */
const settle = () => new Promise((r) => setImmediate(r));

/** Releases every read the hub has started, until it starts no more. */
async function releaseAll(reads: { release: () => void }[]): Promise<void> {
  for (let i = 0; i < 100; i++) {
    await settle();
    const r = reads.shift();
    if (!r) return;
    r.release();
  }
}

/** The keep-alive round the hub runs every KEEPALIVE_MS. */
const keepAlive = (hub: EventHub) => (hub as unknown as { ping: () => void }).ping();

function stream(after: number, opts: Partial<AccountStream> = {}) {
  const got: string[] = [];
  const closed: string[] = [];
  const s: AccountStream = {
    accountId: ACCOUNT,
    after,
    send: (events) => (got.push(...events.map((e) => e.json)), events.length),
    close: (why) => void closed.push(why.reason),
    ping: () => true,
    ...opts,
  };
  return { s, got, closed, ids: () => got.map((j) => JSON.parse(j).id) };
}

t.test(
  'a stream that subscribes from an older id during a read of its account gets every event, in order',
  async (t) => {
    const f = fakeLog();
    const hub = new EventHub(f.runtime, f.listener, pino({ level: 'silent' }), async () => null);
    await hub.start();
    t.teardown(() => hub.stop());
    f.log.push(ev(1), ev(2), ev(3));
    const a = stream(2);
    hub.subscribe(a.s);
    await settle();
    t.equal(f.reads.length, 1, 'the first stream starts a read');
    t.equal(f.reads[0].args.accounts[0].after, 2, 'from its own id');
    // While that read is in flight, a second consumer of the account resumes from 0.
    const b = stream(0);
    hub.subscribe(b.s);
    await releaseAll(f.reads);
    t.same(a.ids(), [3], 'the first stream: what it lacked');
    t.same(b.ids(), [1, 2, 3], 'the second: from its own id, no gap');
    t.equal(a.got[0], ev(3).json, 'the text as the read brought it');

    f.log.push(ev(4), ev(5));
    f.notify();
    await releaseAll(f.reads);
    t.same(a.ids(), [3, 4, 5], 'later events once');
    t.same(b.ids(), [1, 2, 3, 4, 5]);
  },
);

t.test(
  'types filter; a stream without room waits, holds back nobody, reads on from its id once resumed',
  async (t) => {
    const f = fakeLog();
    const hub = new EventHub(f.runtime, f.listener, pino({ level: 'silent' }), async () => null);
    await hub.start();
    t.teardown(() => hub.stop());
    f.log.push(ev(1), ev(2, 'ledger.posted'), ev(3, 'order.paid'));
    // Takes as many events as it has room for.
    let room = 1;
    const slow = stream(0, {
      send: (events) => {
        const took = events.slice(0, room);
        room -= took.length;
        slow.got.push(...took.map((e) => e.json));
        return took.length;
      },
    });
    const paid = stream(0, { types: ['order.paid'] });
    const all = stream(0);
    for (const x of [slow, paid, all]) hub.subscribe(x.s);
    await releaseAll(f.reads);
    t.same(slow.ids(), [1], 'the slow one took what it had room for');
    t.same(paid.ids(), [3], 'only its types');
    t.same(all.ids(), [1, 2, 3], 'the others get everything');

    f.log.push(ev(4, 'order.paid'));
    f.notify();
    await releaseAll(f.reads);
    t.same(paid.ids(), [3, 4]);
    t.same(all.ids(), [1, 2, 3, 4]);
    t.same(slow.ids(), [1], 'waiting for room: handed nothing');
    t.same(slow.closed, [], 'not closed');

    room = 10;
    hub.resume(slow.s);
    await releaseAll(f.reads);
    t.same(slow.ids(), [1, 2, 3, 4], 'resumed: on from its own id, nothing twice');

    room = 0;
    f.log.push(ev(5));
    f.notify();
    await releaseAll(f.reads);
    keepAlive(hub);
    t.same(slow.closed, [], 'one keep-alive waiting: still open');
    keepAlive(hub);
    t.same(slow.closed, ['behind'], 'waiting at two keep-alives in a row: closed as behind');
    t.equal(hub.size(), 2, 'the slow one no longer counts');
    t.same(all.ids(), [1, 2, 3, 4, 5]);
  },
);

t.test(
  'the observer hears each drain (its events handed) and each stream closed, by reason',
  async (t) => {
    const f = fakeLog();
    const drains: { seconds: number; events: number }[] = [];
    const closes: string[] = [];
    const hub = new EventHub(f.runtime, f.listener, pino({ level: 'silent' }), async () => null, {
      fanout: (seconds, events) => drains.push({ seconds, events }),
      closed: (reason) => closes.push(reason),
    });
    await hub.start();
    f.log.push(ev(1), ev(2, 'ledger.posted'));
    const all = stream(0);
    const paid = stream(0, { types: ['order.paid'] });
    const slow = stream(0, { send: () => 0 });
    for (const x of [all, paid, slow]) hub.subscribe(x.s);
    await releaseAll(f.reads);
    t.equal(drains.length, 1, 'one drain for the three subscriptions');
    t.equal(
      drains[0].events,
      2,
      "the events handed: two to the one stream that took them (none of paid's type, the slow one had no room)",
    );
    t.ok(drains[0].seconds >= 0 && drains[0].seconds < 5);
    keepAlive(hub);
    keepAlive(hub);
    t.same(closes, ['behind'], 'the slow one, waiting at two keep-alives');

    f.log.push(ev(3, 'order.paid'));
    f.notify();
    await releaseAll(f.reads);
    t.same(
      drains.map((d) => d.events),
      [2, 2],
      'the next notice: order.paid to both streams left',
    );
    hub.stop();
    t.same(closes, ['behind', 'stopping', 'stopping'], 'stopping closes the two left');
  },
);

t.test('idle(): at once without a drain; with one, when it ends or at the bound', async (t) => {
  const f = fakeLog();
  const hub = new EventHub(f.runtime, f.listener, pino({ level: 'silent' }), async () => null);
  await hub.start();
  t.teardown(() => hub.stop());
  await hub.idle(60_000);
  t.pass('no drain: resolved at once');
  f.log.push(ev(1));
  hub.subscribe(stream(0).s);
  let idle = false;
  const waiting = hub.idle(60_000).then(() => (idle = true));
  await settle();
  await settle();
  t.equal(f.reads.length, 1, 'a read in flight');
  t.equal(idle, false, 'still draining: not idle');
  await releaseAll(f.reads);
  await waiting;
  t.equal(idle, true, 'idle once the drain ended');
  f.log.push(ev(2));
  f.notify();
  await hub.idle(0);
  t.equal(f.reads.length, 1, 'a bound of 0: resolved while the read is still in flight');
  await releaseAll(f.reads);
});

t.test(
  'perEvent: a rendering made once per event object, kept apart from other renderings and other events',
  async (t) => {
    const made: string[] = [];
    const frame = perEvent((e) => (made.push(`frame ${e.id}`), `{"event":${e.json}}`));
    const message = perEvent((e) => (made.push(`message ${e.id}`), `data: ${e.json}\n\n`));
    const a = ev(1);
    const b = ev(2);
    t.equal(frame(a), '{"event":{"id":1,"type":"order.created"}}');
    t.equal(frame(a), frame(a), 'the same text for every stream handed the event');
    t.equal(
      message(a),
      'data: {"id":1,"type":"order.created"}\n\n',
      'another rendering of the same event is its own',
    );
    t.equal(frame(b), '{"event":{"id":2,"type":"order.created"}}');
    t.equal(frame(ev(1)), frame(a), 'the same event read again (a new object) renders alike');
    t.same(
      made,
      ['frame 1', 'message 1', 'frame 2', 'frame 1'],
      'each rendering made once per event object',
    );
    t.same(
      Object.keys(a),
      ['id', 'type', 'json'],
      'the event keeps its own fields only (the rendering is under a symbol)',
    );
  },
);
