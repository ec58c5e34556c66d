/**
 * `instanceof SkyqError` holds across copies of skyq's errors module: the CLI's bundle catches
 * what the library it loads for `skyq bench` throws (test/cli-errors), and an app may hold two
 * installs. A subclass still asks for its own class.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { AddBulkError, SkyqError } from '../src/base/errors.js';
import { ROOT } from './helpers/runtime.js';

// The build's copy (the suite builds before it runs; lint, which comes first, has no dist/).
const built = (await import(
  pathToFileURL(join(ROOT, 'dist/src/base/errors.js')).href
)) as typeof import('../src/base/errors.js');

it('instanceof SkyqError holds for another copy of the module, and nothing else', () => {
  expect(built.SkyqError).not.toBe(SkyqError); // two copies: dist/ and src/
  const theirs = new built.SkyqError('ERR_SKYQ_BODY', 'too big');
  expect(theirs instanceof SkyqError).toBe(true);
  expect(new SkyqError('ERR_SKYQ_BODY', 'too big') instanceof built.SkyqError).toBe(true);
  expect(theirs instanceof Error).toBe(true);
  for (const other of [new Error('too big'), { code: 'ERR_SKYQ_BODY' }, null, 'text', undefined])
    expect(other instanceof SkyqError).toBe(false);
  // The mark is not enumerable: a logged or serialised error shows what it did before.
  expect(Object.keys(theirs).sort()).toEqual(['code', 'field', 'name']);
});

it('a subclass asks for its own class', () => {
  expect(new SkyqError('ERR_SKYQ_PARTIAL_ADD', 'some failed') instanceof AddBulkError).toBe(false);
  const bulk = Object.create(AddBulkError.prototype) as AddBulkError;
  expect(bulk instanceof AddBulkError).toBe(true);
  expect(bulk instanceof built.AddBulkError).toBe(false);
});
