// What a flow parent learns of each child (lua/flow-lib.lua keeps it in the parent's flow hash
// as `<P>:r:<C>`): '' not ended yet, 'd<ms>|<kind><result>' done (the result as history.lua
// keeps it), 'x<reason>' dead, 'c' cancelled.
import { decodeResult, type JobResult } from '../history/result.js';
import type { Body } from '../record.js';

/** How a flow child ended, as its parent's handler sees it in `job.children`. */
export type FlowChildState = 'done' | 'dead' | 'cancelled' | 'pending';

/** One child of a flow parent, in the order the flow gave them (`job.children`). */
export interface FlowChild {
  /** the child's id */
  id: string;
  /** its group */
  group: number;
  /** its name, if it has one */
  name: string | undefined;
  /** an optional child: its death did not make the parent dead */
  optional: boolean;
  /** done, dead (an optional child), cancelled (an optional child), or pending (not ended) */
  state: FlowChildState;
  /** done: what its handler returned (undefined when nothing, or when it was not kept whole) */
  result?: Body | undefined;
  /** done: how the result was kept, as get() says: none, the value, truncated or not serialisable */
  resultKept?: JobResult['kind'];
  /** done, with a result over resultMaxBytes: its size in bytes */
  resultBytes?: number;
  /** dead: why it died */
  error?: string;
}

/** A parent's children as flow-add.lua stores them: [group, id, optional 0|1, name or '']. */
export type ChildEntry = [group: number, id: string, optional: 0 | 1, name: string];

/** A child's entry and its outcome, as flow-children.lua returns them. */
export function flowChild(entry: ChildEntry, outcome: Buffer | null): FlowChild {
  const [group, id, optional, name] = entry;
  const child: FlowChild = {
    id,
    group,
    name: name === '' ? undefined : name,
    optional: optional === 1,
    state: 'pending',
  };
  if (!outcome || outcome.length === 0) return child;
  const kind = String.fromCharCode(outcome[0] as number);
  if (kind === 'x') {
    child.state = 'dead';
    child.error = outcome.toString('utf8', 1);
  } else if (kind === 'c') {
    child.state = 'cancelled';
  } else if (kind === 'd') {
    child.state = 'done';
    const bar = outcome.indexOf(0x7c);
    const result = decodeResult(outcome.subarray(bar + 1));
    child.resultKept = result.kind;
    if (result.kind === 'value') child.result = result.value;
    if (result.kind === 'truncated') child.resultBytes = result.bytes;
  }
  return child;
}
