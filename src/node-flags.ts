// The Node.js flags the service's process runs with: `npm start`, `ops/service.unit`, the cluster's
// front ends and the bench's service all start `node <these> dist/src/main.js`
// (test/unit/node-flags.test.ts holds them to it).
//
// --max-semi-space-size=32: the main thread's young generation, where a close's fan-out makes its
// objects (10 000 events cloned from the shard worker, their frames) and drops them once sent. With
// V8's default (16 MB semi-spaces here) they were scavenged mid-fan-out, the batch still held copied
// and promoted: 33–34 ms of service CPU per 1 000 delivered events in four runs of `bench/ws.mjs
// --peer`; 27–38 (median 29) with 32 MB, 25–29.5 with 64 MB. Not 64: the young generation stays
// resident once used, and 64 MB took the service past issue 14's 600 MB in bench/agents-memory.mjs
// (peak 491 MB with 32). bench/README.md "Issue 46 — the fan-out's floor measured apart".
// A process-wide V8 flag: shard workers are not handed it (actors/runtime/shards.ts workerExecArgv;
// a Worker refuses it, and sizes its heap by resourceLimits).
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
