// AnswersActor's messages and replies ("answers:sweep").
import { actorRef } from '../runtime/protocol.js';

/** `at`: now on the service clock (real unix seconds): events older than their retention before it go. */
export type AnswersMessage = { kind: 'sweep'; at: number };
/** `deleted`: stored answers forgotten; `events`: events past their retention. */
export type Swept = { deleted: number; events: number };

export type AnswersReplies = { sweep: Swept };
/** The one AnswersActor's address. */
export const answersRef = actorRef<AnswersMessage, AnswersReplies>('answers', 'sweep');
