// The package root: the Queue, the actor runtime, their types and the errors they throw.

export {
  AddBulkError,
  errors,
  FlowAddError,
  type FlowIds,
  SkyqError,
  type SkyqErrorCode,
} from './base/errors.js';
export { groupKeys, homeGroup } from './base/keys.js';
export type { HttpHandle, HttpOptions, ListenAddress } from './http/index.js';
export type {
  AddOptions,
  AddSettings,
  Due,
  RescheduleOptions,
} from './queue/add-options.js';
export { LIST_STATES } from './queue/browse/cursor.js';
export type {
  ListItem,
  ListOptions,
  ListPage,
  ListState,
  StateCounts,
} from './queue/browse/list.js';
export type { RedisClock } from './queue/clock.js';
export type { QueueConfig, QueueOptions, ScoreUnit } from './queue/config.js';
export type {
  DeadLetter,
  DeadLetterOutcome,
  DeadLetterPage,
  DeadLetterPageOptions,
  DeadLetterSelection,
  DeadLetters,
} from './queue/dead-letters.js';
export type { EventsFrom } from './queue/events/cursor.js';
export { EVENT_TYPES, type EventType, type QueueEvent } from './queue/events/event.js';
export type { EventsOptions } from './queue/events/reader.js';
export type {
  FlowChild,
  FlowChildSpec,
  FlowChildState,
  FlowNodeOptions,
  FlowSpec,
  Flows,
  FlowTreeNode,
  ParentData,
  RelayRound,
} from './queue/flows/flows.js';
export type { KeepDoneOption, Retention } from './queue/history/retention.js';
export type { WaitForOptions, WaitResult } from './queue/history/wait-for.js';
export type { IntakeListOption, IntakeSpec } from './queue/intake/spec.js';
export type { ZsetIntakeOption, ZsetIntakeSpec } from './queue/intake/zset-spec.js';
export type { Outcome } from './queue/leases.js';
export type { Message, PollResult } from './queue/message.js';
export type { ChildCounts, MessageInfo, MessageState } from './queue/message-info.js';
export type { PageOrder } from './queue/page-order.js';
export type { GroupCounts, PollOptions } from './queue/queue.js';
export { Queue } from './queue/queue.js';
export type { BucketState, RateLimits } from './queue/ratelimit/buckets.js';
export type { Rate, RateLimitOption } from './queue/ratelimit/spec.js';
export type { Backoff, Body, FlowParent, JsonValue, ScheduleTag } from './queue/record.js';
export type { PreviewOptions, Schedules } from './queue/schedules/schedules.js';
export type {
  ScheduleOptions,
  ScheduleSpec,
  ScheduleState,
  ScheduleTiming,
} from './queue/schedules/spec.js';
export type {
  ClusterNode,
  ConnectionOptions,
  RedisClient,
  SentinelNode,
  SentinelOptions,
  TlsOptions,
} from './redis/connection.js';
export type { Pem } from './redis/tls.js';
export type { ActorApi, Handler, JobContext } from './runtime/actor-types.js';
export type { DebugCommand } from './runtime/coordinator.js';
export type { DataLoss, Depths } from './runtime/dataset-tags.js';
export type { HistogramData, Summary } from './runtime/histogram.js';
export type { IntakeListFigures } from './runtime/intake/figures.js';
export type { KeyspaceMode } from './runtime/keyspace.js';
export type { AttachedServer, RuntimeOptions } from './runtime/launcher.js';
export { Launcher } from './runtime/launcher.js';
export type { ActorStat, ActorView, LauncherStats } from './runtime/launcher-stats.js';
export type { NameFigure } from './runtime/name-stats.js';
export type { ServerState } from './runtime/server-checks.js';
export {
  ACTOR_STATES,
  type ActorState,
  COUNTER_NAMES,
  type CounterName,
  type Counters,
  HISTOGRAM_NAMES,
  type HistogramName,
} from './runtime/stat-block.js';
export type { StartOptions } from './start.js';
export { startActors } from './start.js';
