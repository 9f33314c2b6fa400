// The console inventory page's chart of a family's resale price (src/web/charts.ts
// chartPoints): oldest left, highest price at the top, unknown sessions skipped.
import t from 'tap';
import { chartPoints } from '../../src/web/charts.js';

t.test(
  'chartPoints: scaled into the 240 x 48 box, nulls skipped, nothing below two prices',
  async (t) => {
    t.equal(chartPoints([1, null, 3]), '0.0,48.0 240.0,0.0');
    t.equal(chartPoints([2, 2]), '0.0,24.0 240.0,24.0', 'a flat price sits in the middle');
    t.equal(chartPoints([5, null]), '', 'one price is no line');
    t.equal(chartPoints([]), '');
  },
);
