// Every actor kind and read task of the service; each worker registers these.
import { accountActor } from './account/actor.js';
import { agentActor } from './agent/actor.js';
import { marketActor } from './market/actor.js';
import { holderActor } from './holder/actor.js';

export const actorKinds = [marketActor, agentActor, accountActor, holderActor];
export { readTasks } from './record/index.js';
