// Every actor kind and read task of the service; each worker registers these.
import { accountActor } from './account/actor.js';
import { accountReads } from './account/reads.js';
import { agentActor } from './agent/actor.js';
import { agentReads } from './agent/reads.js';
import { marketActor } from './market/actor.js';
import { holderActor } from './holder/actor.js';
import { holderReads } from './holder/reads.js';
import { holderMoneyReads } from './holder/money-reads.js';
import { holderFiguresReads } from './holder/figures.js';
import { timelineReads } from './holder/timeline.js';
import { answersActor } from './answers/actor.js';
import { cartActor } from './cart/actor.js';
import { cartReads } from './cart/reads.js';
import { payoutsActor } from './payouts/actor.js';
import { exchangeActor } from './exchange/actor.js';
import { exchangeReads } from './exchange/reads.js';
import { competitionActor } from './competition/actor.js';
import { competitionReads } from './competition/reads.js';
import { eventReads } from './events/reads.js';
import { receiptsActor } from './receipts/actor.js';
import { receiptReads } from './receipts/reads.js';
import { webhooksActor } from './webhooks/actor.js';
import { webhookReads } from './webhooks/reads.js';
import { idempotencyReads } from './runtime/idempotency.js';
import { readTasks as recordReads } from './record/index.js';
export { replicaReads } from './record/replica.js';

export const actorKinds = [
  marketActor,
  agentActor,
  accountActor,
  holderActor,
  answersActor,
  cartActor,
  payoutsActor,
  exchangeActor,
  competitionActor,
  receiptsActor,
  webhooksActor,
];
export const readTasks = {
  ...recordReads,
  ...idempotencyReads,
  ...accountReads,
  ...agentReads,
  ...holderReads,
  ...holderMoneyReads,
  ...holderFiguresReads,
  ...timelineReads,
  ...cartReads,
  ...exchangeReads,
  ...competitionReads,
  ...eventReads,
  ...receiptReads,
  ...webhookReads,
};
