// One mailbox per actor inside a worker: each actor's turns run one after another (a promise
// chain), while different actors' turns overlap freely when they wait on the database.

export class Mailboxes {
  private readonly tails = new Map<string, { tail: Promise<unknown>; depth: number }>();

  /** Queues `turn` behind the actor's earlier turns; resolves with the turn's own result. */
  post<T>(actorId: string, turn: () => Promise<T>): Promise<T> {
    let box = this.tails.get(actorId);
    if (!box) {
      box = { tail: Promise.resolve(), depth: 0 };
      this.tails.set(actorId, box);
    }
    const entry = box;
    entry.depth++;
    const run = entry.tail.then(turn);
    // The chain continues whether this turn succeeded or failed; the caller sees the failure.
    entry.tail = run.then(
      () => this.done(actorId, entry),
      () => this.done(actorId, entry),
    );
    return run;
  }

  private done(actorId: string, entry: { depth: number }): void {
    entry.depth--;
    if (entry.depth === 0 && this.tails.get(actorId) === entry) this.tails.delete(actorId);
  }

  /** Messages queued or running, across all actors of this worker. */
  get depth(): number {
    let n = 0;
    for (const box of this.tails.values()) n += box.depth;
    return n;
  }
}
