// The competition window the competition tests run in: the h2 window holding 10 January 2027.
import { COMPETITION_WINDOW_SESSIONS } from '../../src/rules.js';
import { MARKETS } from '../../src/engine/index.js';

/** The h2 session length (s) and the sessions of one window. */
export const H2 = MARKETS.h2.interval_seconds;
export const N = COMPETITION_WINDOW_SESSIONS.h2;
/** The window's number (competition id `h2-${W}`). */
export const W = Math.floor(Date.UTC(2027, 0, 10) / 1000 / H2 / N);
/** Its first second (real unix seconds); the tests start 100 s into it. */
export const WINDOW_START = W * N * H2;
