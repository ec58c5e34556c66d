// The package root: the Queue, its types and the errors it throws.

export type { AddOptions } from './add-options.js';
export type { QueueOptions, ScoreUnit } from './config.js';
export type { DeadLetter, DeadLetterSelection } from './dead-letters.js';
export { AddBulkError, errors, SkyqError } from './errors.js';
export { groupKeys, homeGroup } from './keys.js';
export type { Message, PollResult } from './message.js';
export type { MessageInfo, MessageState } from './message-info.js';
export type { GroupCounts, PollOptions } from './queue.js';
export { Queue } from './queue.js';
export type { Backoff, Body, JsonValue } from './record.js';
export type { ClusterNode, ConnectionOptions, RedisClient } from './redis/connection.js';
export type { ActorApi, Handler, JobContext } from './runtime/actor.js';
export type { HistogramData, Summary } from './runtime/histogram.js';
export type { StartOptions } from './runtime/launcher.js';
export { Launcher, startActors } from './runtime/launcher.js';
export type { ActorStat, ActorView, LauncherStats } from './runtime/launcher-stats.js';
export type { ActorState, Counters } from './runtime/stat-block.js';
