// The package root: the Queue, its types and the errors it throws.
export { Queue } from './queue.js';
export type { MessageInfo, MessageState, GroupCounts, PollOptions } from './queue.js';
export type { QueueOptions, ScoreUnit } from './config.js';
export type { AddOptions } from './add-options.js';
export type { Message, PollResult } from './message.js';
export type { Body, Backoff, JsonValue } from './record.js';
export type { DeadLetter, DeadLetterSelection } from './dead-letters.js';
export type { ClusterNode, ConnectionOptions, RedisClient } from './redis/connection.js';
export { SkyqError, errors } from './errors.js';
export { groupKeys, homeGroup } from './keys.js';
