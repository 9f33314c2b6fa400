// The event log's NOTIFYs as a front end hears them (actors/events/log.ts): a LISTEN connection of
// the test's own on the events channel.
import pg from 'pg';
import { EVENTS_CHANNEL } from '../../actors/events/messages.js';

/** Every notice's payload on the events channel of `url`'s database, in arrival order, from now on. */
export async function eventNotices(
  t: { teardown: (fn: () => unknown) => void },
  url: string,
): Promise<string[]> {
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  t.teardown(() => listener.end());
  const notices: string[] = [];
  listener.on('notification', (n) => n.channel === EVENTS_CHANNEL && notices.push(n.payload ?? ''));
  await listener.query(`listen ${EVENTS_CHANNEL}`);
  return notices;
}
