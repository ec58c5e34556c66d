// One job for the dashboard's job view: GET /api/jobs/<id>[?group=g][&idBase64=…] answers what
// get() tells, with the body and the result ready to show (text as it is, JSON pretty-printed,
// bytes in hex, each cut to JOB_PREVIEW characters), the time it started where that is known,
// and Redis's clock now (for "due in 5 min"). `idBase64` names an id that is not UTF-8 by its
// bytes, as pages give it back; `group` spares looking in the others.
import { isUtf8 } from 'node:buffer';
import type { FlowTreeNode } from '../queue/flows/read.js';
import type { MessageInfo } from '../queue/message-info.js';
import type { Body } from '../queue/record.js';
import type { ApiContext } from './api.js';
import { idBytes, wholeNumber } from './params.js';
import { json, problem, type Reply } from './server.js';

/** characters of a body (or a result) the job view shows */
export const JOB_PREVIEW = 64 * 1024;
export const JOB_PATH = /^\/api\/jobs\/([^/]+)$/;
export const JOB_QUERY = ['group', 'idBase64'] as const;

/** A value as the view shows it: its kind, and its text (cut to `max` characters). */
export interface Shown {
  kind: 'text' | 'json' | 'bytes';
  text: string;
  /** characters the whole text has */
  length: number;
  truncated: boolean;
}

export function shown(value: Body, max = JOB_PREVIEW): Shown {
  const [kind, text]: [Shown['kind'], string] =
    typeof value === 'string'
      ? ['text', value]
      : Buffer.isBuffer(value)
        ? ['bytes', hexDump(value, max)]
        : ['json', JSON.stringify(value, null, 2)];
  const truncated = text.length > max;
  return { kind, text: truncated ? text.slice(0, max) : text, length: text.length, truncated };
}

/** Bytes as lines of 16 in hex, each after its offset; only as many as `max` characters hold. */
function hexDump(bytes: Buffer, max: number): string {
  const lines: string[] = [];
  const shownBytes = Math.min(bytes.length, Math.ceil(max / 58) * 16);
  for (let at = 0; at < shownBytes; at += 16) {
    const row = bytes
      .subarray(at, at + 16)
      .toString('hex')
      .replace(/(..)(?!$)/g, '$1 ');
    lines.push(`${at.toString(16).padStart(8, '0')}  ${row}`);
  }
  const rest = bytes.length - shownBytes;
  return `${bytes.length} bytes${rest > 0 ? ` (the first ${shownBytes})` : ''}\n${lines.join('\n')}`;
}

export async function job({ queue }: ApiContext, pathId: string, url: URL): Promise<Reply> {
  const group = wholeNumber(url, 'group');
  const given = url.searchParams.get('idBase64');
  const id = given === null ? pathId : idBytes('idBase64', given);
  const [info, now] = await Promise.all([
    queue.get(id, group === undefined ? {} : { group }),
    queue.clock(group ?? 0).now(),
  ]);
  if (!info) return problem(404, `no message ${pathId} (unknown, finished, or cancelled)`);
  // A flow parent: its tree below it, each node's state (the view links every node). One node
  // more than the view shows tells whether the tree was cut (`flowCut`).
  const tree = info.children
    ? await queue.flows.get(info.id, { group: info.group, maxNodes: FLOW_NODES + 1 })
    : null;
  return json({
    ...jobView(info, id, Math.round(now)),
    flow: tree ? flowView(tree).children : null,
    flowCut: tree ? nodesIn(tree) > FLOW_NODES : false,
  });
}

function nodesIn(node: FlowTreeNode): number {
  return node.children.reduce((sum, child) => sum + nodesIn(child), 1);
}

/** most nodes of a flow's tree the job view shows */
export const FLOW_NODES = 500;

/** A flow's tree as the view shows it: ids, states, names; results stay in each job's own view. */
function flowView(node: FlowTreeNode): FlowNodeView {
  const { id, group, name, optional, state, error } = node;
  return {
    id,
    group,
    name: name ?? null,
    optional,
    state,
    error: error ?? null,
    children: node.children.map(flowView),
  };
}

interface FlowNodeView {
  id: string;
  group: number;
  name: string | null;
  optional: boolean;
  state: string;
  error: string | null;
  children: FlowNodeView[];
}

/** get()'s answer as the view shows it. */
export function jobView(info: MessageInfo, id: string | Buffer, now: number) {
  const { body, result, ...rest } = info;
  const raw = Buffer.isBuffer(id) && !isUtf8(id);
  return {
    ...rest,
    ...(raw ? { idBase64: id.toString('base64') } : {}),
    body: info.bodyKept === false ? null : shown(body),
    result: result === undefined ? null : shown(result),
    // Kept for done jobs only: when the handler started is when it finished, less its time.
    startedAt:
      info.finishedAt !== undefined && info.durationMs !== undefined
        ? Math.round(info.finishedAt - info.durationMs)
        : null,
    now,
  };
}
