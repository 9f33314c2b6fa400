// Fixed-bytes baseline for bench/run.mjs: a bare uWebSockets.js server that answers every GET with
// the same pre-built bytes (status 200, content-type application/json), nothing else per request.
// It is the ceiling of the HTTP stack on this machine; the service's routes are quoted as a ratio
// of it. The native binary is loaded exactly as src/http/uws.ts does (never the JS fallback).
//
//   node bench/fixed-server.mjs [--host 127.0.0.1] [--port 0] [--bytes 20480]
//
// Prints one line `{"listening":{"host":...,"port":...,"bytes":...}}` on stdout once it accepts
// connections. Exits on SIGTERM/SIGINT, and when its stdin closes (the parent bench went away).
import { parseArgs } from 'node:util';
import { exitWithParent, loadUws } from './lib/uws.mjs';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    bytes: { type: 'string', default: '20480' },
  },
});
if (values.host !== '127.0.0.1') throw new Error('fixed-server only listens on 127.0.0.1');
const size = Number(values.bytes);
if (!Number.isInteger(size) || size < 16 || size > 64 * 1024 * 1024)
  throw new Error(`--bytes must be an integer >= 16, got ${values.bytes}`);

// Valid JSON of exactly `size` bytes, built once.
function constantJson(n) {
  const head = '{"fixed":"';
  const tail = '"}';
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  let pad = '';
  for (let i = 0; pad.length < n - head.length - tail.length; i++)
    pad += alphabet[i % alphabet.length];
  return Buffer.from(head + pad + tail);
}
const body = constantJson(size);
if (body.length !== size) throw new Error('constant body has the wrong size');

const uws = loadUws();
const app = uws.App();
app.get('/*', (res) => {
  res.cork(() => {
    res.writeStatus('200 OK');
    res.writeHeader('content-type', 'application/json');
    res.end(body);
  });
});
app.any('/*', (res) => {
  res.cork(() => {
    res.writeStatus('405 Method Not Allowed');
    res.end();
  });
});

let listenSocket;
app.listen(values.host, Number(values.port), (socket) => {
  if (!socket) {
    console.error(`cannot listen on ${values.host}:${values.port}`);
    process.exit(1);
  }
  listenSocket = socket;
  const port = uws.us_socket_local_port(socket);
  process.stdout.write(
    JSON.stringify({ listening: { host: values.host, port, bytes: body.length } }) + '\n',
  );
});

exitWithParent(() => listenSocket && uws.us_listen_socket_close(listenSocket));
