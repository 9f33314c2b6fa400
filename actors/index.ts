// Every actor kind of the service; the worker registers these.
import { marketActor } from './market.js';

export const actorKinds = [marketActor];
