// AnswersActor's messages and replies ("answers:sweep").

/** `at`: now on the service clock (real unix seconds): events older than their retention before it go. */
export type AnswersMessage = { kind: 'sweep'; at: number };
/** `deleted`: stored answers forgotten; `events`: events past their retention. */
export type Swept = { deleted: number; events: number };
