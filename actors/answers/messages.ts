// AnswersActor's messages and replies ("answers:sweep").

export type AnswersMessage = { kind: 'sweep' };
export type Swept = { deleted: number };
