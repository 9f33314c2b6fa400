// The Node.js flags the service's process runs with: `npm start`, `ops/service.unit`, the cluster's
// front ends and the bench's service all start `node <these> dist/src/main.js`
// (test/unit/node-flags.test.ts holds them to it).
//
// --max-semi-space-size=32: the main thread's young generation, where a close's fan-out makes its
// objects (10 000 events cloned from the shard worker, their frames) and drops them once sent. With
// V8's default semi-spaces they are scavenged mid-fan-out while the batch still holds them, so they
// are copied and promoted, which costs the service CPU on every delivered event (`bench/ws.mjs
// --peer`). Not 64: the young generation stays resident once used, and 64 MB takes the service past
// the 600 MB target of bench/agents-memory.mjs.
// A process-wide V8 flag: shard workers are not handed it (actors/runtime/shards.ts workerExecArgv;
// a Worker refuses it, and sizes its heap by resourceLimits).
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
