// The Node.js flags the service's process runs with: `npm start`, `ops/service.unit`, the cluster's
// front ends and the bench's service all start `node <these> dist/src/main.js`
// (test/unit/node-flags.test.ts holds them to it).
//
// --max-semi-space-size=64: the main thread's young generation, where a close's fan-out makes its
// objects (10 000 events cloned from the shard worker, their frames) and drops them once sent. V8's
// default (16 MB semi-spaces here) scavenged them mid-fan-out, copying the batch still held and
// promoting it for the old generation's collector: 33–34 ms of service CPU per 1 000 delivered
// events in four runs of `bench/ws.mjs --peer`, 25–27.5 in three with 64 MB (bench/README.md "Issue
// 46 — the fan-out's floor measured apart"). A process-wide V8 flag: shard workers are not handed it
// (actors/runtime/shards.ts workerExecArgv; a Worker refuses it, and sizes its heap by resourceLimits).
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
