// What the competition pages show of a competition's window: its instants as <time> elements (UTC as
// served, "2026-11-26 14:00 UTC", the reader's own zone once public/site.js runs), never raw ISO text.
import { isoOf, utcMinute } from './checkout-view.js';

/** starts_at / ends_at (ISO 8601 as served) as the pages show them. */
export function timesOf(c: { starts_at: string; ends_at: string }) {
  const at = (iso: string) => {
    const unix = Date.parse(iso) / 1000;
    return Number.isFinite(unix) ? { text: utcMinute(unix), iso: isoOf(unix) } : { text: iso, iso };
  };
  const starts = at(c.starts_at);
  const ends = at(c.ends_at);
  return { starts: starts.text, starts_iso: starts.iso, ends: ends.text, ends_iso: ends.iso };
}
