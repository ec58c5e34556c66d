// The package root: the Queue, its types and the errors it throws.

export { AddBulkError, errors, SkyqError } from './base/errors.js';
export { groupKeys, homeGroup } from './base/keys.js';
export type { HttpHandle, HttpOptions } from './http/index.js';
export type { AddOptions } from './queue/add-options.js';
export type { ListItem, ListOptions, ListPage, ListState } from './queue/browse/list.js';
export type { QueueOptions, ScoreUnit } from './queue/config.js';
export type { DeadLetter, DeadLetterSelection } from './queue/dead-letters.js';
export type { EventsFrom } from './queue/events/cursor.js';
export type { EventType, QueueEvent } from './queue/events/event.js';
export type { EventsOptions } from './queue/events/reader.js';
export type { WaitResult } from './queue/history/wait-for.js';
export type { IntakeListOption } from './queue/intake/spec.js';
export type { Message, PollResult } from './queue/message.js';
export type { MessageInfo, MessageState } from './queue/message-info.js';
export type { PageOrder } from './queue/page-order.js';
export type { GroupCounts, PollOptions } from './queue/queue.js';
export { Queue } from './queue/queue.js';
export type { Backoff, Body, JsonValue } from './queue/record.js';
export type {
  ClusterNode,
  ConnectionOptions,
  RedisClient,
  SentinelNode,
  SentinelOptions,
} from './redis/connection.js';
export type { ActorApi, Handler, JobContext } from './runtime/actor.js';
export type { HistogramData, Summary } from './runtime/histogram.js';
export type { IntakeListFigures } from './runtime/intake/figures.js';
export type { AttachedServer, RuntimeOptions } from './runtime/launcher.js';
export { Launcher } from './runtime/launcher.js';
export type { ActorStat, ActorView, LauncherStats } from './runtime/launcher-stats.js';
export type { ActorState, Counters } from './runtime/stat-block.js';
export type { StartOptions } from './start.js';
export { startActors } from './start.js';
