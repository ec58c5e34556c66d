// `skyq produce --json`: one JSON object per line,
//   {"body": …, "delay": "5s" | 5000, "priority": 3, "key": "order-7", "id": "order:7",
//    "name": "order.cancel", "dedupe": "10m" | 600000}
// body is required (any JSON value; a string is stored as is). delay is a
// duration with a unit ("5s") or a number of milliseconds (as in the library's
// add options); dedupe (with id) likewise: for that long the same id adds nothing. The flags
// --delay, --priority, --key and --name give the defaults.

import { errors } from '../base/errors.js';
import type { AddOptions } from '../queue/add-options.js';
import type { Body } from '../queue/record.js';
import { parseDuration } from './duration.js';

export const JSON_LINE_FIELDS = [
  'body',
  'delay',
  'priority',
  'key',
  'id',
  'name',
  'dedupe',
] as const;

export interface ProduceItem {
  body: Body;
  options: AddOptions;
}

/** The message a JSON line asks for; throws an error naming the field that is wrong. */
export function parseJsonLine(text: string, defaults: AddOptions): ProduceItem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw errors.invalidOption('line', `is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw errors.invalidOption('line', `must be a JSON object with ${JSON_LINE_FIELDS.join(', ')}`);
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).filter(
    (name) => !(JSON_LINE_FIELDS as readonly string[]).includes(name),
  );
  if (unknown.length > 0)
    throw errors.invalidOption(
      unknown.join(', '),
      `unknown field (the fields are ${JSON_LINE_FIELDS.join(', ')})`,
    );
  if (!('body' in fields)) throw errors.invalidOption('body', 'is missing');
  const options: AddOptions = { ...defaults };
  if (fields.delay !== undefined) options.delay = lineDuration(fields.delay, 'delay');
  // The library checks these and names the field when they are wrong.
  if (fields.priority !== undefined) options.priority = fields.priority as number;
  if (fields.key !== undefined) options.key = fields.key as string;
  if (fields.id !== undefined) options.id = fields.id as string;
  if (fields.name !== undefined) options.name = fields.name as string;
  if (fields.dedupe !== undefined) options.dedupeMs = lineDuration(fields.dedupe, 'dedupe');
  return { body: fields.body as Body, options };
}

function lineDuration(value: unknown, field: string): number {
  if (typeof value === 'string') return parseDuration(value, field);
  if (typeof value === 'number') return value;
  throw errors.invalidOption(field, 'must be a duration like "5s" or a number of ms', value);
}
