// Every actor kind and read task of the service; each worker registers these.
import { marketActor } from './market/actor.js';

export const actorKinds = [marketActor];
export { readTasks } from './record/index.js';
