// Every actor kind of the service; the worker registers these.
import { marketActor } from './market/actor.js';

export const actorKinds = [marketActor];
