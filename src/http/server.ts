// The front end: registers the route table on uWebSockets.js, each route's requests through its
// pipeline (src/http/pipeline.ts: read, body, authentication, validation, idempotency, handler;
// answer.ts: the answer and its log line), and what the table does not know as 404 or 405.
import { Compile } from 'typebox/compile';
import type { InternalRequest, Method, Reply } from './route.js';
import { Problem } from '../schemas/common.js';
import { uws, type TemplatedApp } from './uws.js';
import type { Front, ServerOptions } from './front.js';
import { compileRoute, patternRegex, toUwsPath } from './compiled-route.js';
import { dispatch, serveRequest, serveUnmatched, type InternalRoute } from './pipeline.js';

export type { Authenticator, ServerOptions } from './front.js';
export { crossSite } from './pipeline.js';

export type FrontEnd = {
  app: TemplatedApp;
  /** Requests received and not yet answered. */
  inflight: () => number;
  /** Runs a request inside the process through a route's pipeline (Context.dispatch). */
  dispatch: (req: InternalRequest) => Promise<Reply>;
};

export function createApp(opts: ServerOptions): FrontEnd {
  const app = uws.App();
  /** Every route's path under each method, to tell a 405 from a 404. */
  const known: { method: Method; re: RegExp }[] = [];
  /** The compiled routes, for requests run inside the process (Context.dispatch). */
  const internal: InternalRoute[] = [];
  const front: Front = {
    opts,
    logRequests: opts.log.isLevelEnabled('info'),
    inflight: 0,
    dispatch: (r) => dispatch(front, internal, r),
  };
  const checks = opts.responseChecks ?? process.env.SVC_RESPONSE_CHECKS === '1';
  const problemCheck = checks ? Compile(Problem) : undefined;

  for (const route of opts.routes) {
    const { uwsPath, names } = toUwsPath(route.path);
    const c = compileRoute(route, names, problemCheck);
    known.push({ method: route.method, re: patternRegex(route.path) });
    internal.push({ c, re: patternRegex(route.path, true) });
    const register = { GET: app.get, POST: app.post, PUT: app.put, DELETE: app.del }[route.method];
    register.call(app, uwsPath, (res, req) => serveRequest(front, res, req, c));
  }
  app.any('/*', (res, req) => serveUnmatched(front, known, res, req));

  return { app, inflight: () => front.inflight, dispatch: front.dispatch };
}

export type Listening = { port: number; close: () => void };

export function listen(app: TemplatedApp, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) return reject(new Error(`cannot listen on ${host}:${port}`));
      resolve({
        port: uws.us_socket_local_port(socket),
        close: () => uws.us_listen_socket_close(socket),
      });
    });
  });
}
