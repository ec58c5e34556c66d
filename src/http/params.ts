// What an API request may carry, checked before a route reads anything: the query parameters
// each route takes (any other, or one given twice, is a 400 naming it, so `?after=` where the
// route takes `cursor` is not silently ignored), whole numbers, and ids given as bytes.
import { errors } from '../base/errors.js';

/** Refuses a parameter `path` does not take, or one given more than once. */
export function checkQuery(url: URL, takes: readonly string[]): void {
  for (const name of new Set(url.searchParams.keys())) {
    if (!takes.includes(name)) {
      const which = takes.length === 0 ? 'it takes none' : `it takes ${takes.join(', ')}`;
      throw errors.invalidOption(name, `is not a parameter of ${url.pathname} (${which})`);
    }
    if (url.searchParams.getAll(name).length > 1) {
      throw errors.invalidOption(name, 'is given more than once');
    }
  }
}

/** An optional whole-number parameter (digits only); a malformed one is a 400 naming it. */
export function wholeNumber(url: URL, name: string): number | undefined {
  const text = url.searchParams.get(name);
  if (text === null || text === '') return undefined;
  if (!/^\d{1,15}$/.test(text))
    throw errors.invalidOption(name, 'must be a whole number ≥ 0', text);
  return Number(text);
}

/** An optional text parameter ('' counts as not given). */
export function textParam(url: URL, name: string): string | undefined {
  return url.searchParams.get(name) || undefined;
}

/** Standard base64 of an id that is not UTF-8 (as pages give it back in `idBase64`). */
export function idBytes(field: string, value: unknown): Buffer {
  const ok =
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= 64 * 1024 &&
    value.length % 4 === 0 &&
    /^[A-Za-z0-9+/]+={0,2}$/.test(value);
  if (!ok) throw errors.invalidOption(field, 'must be an id’s bytes in base64', value);
  return Buffer.from(value, 'base64');
}

/** A route's JSON body as an object, refusing a key it does not take. */
export function bodyObject(body: unknown, takes: readonly string[]): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.invalidOption('body', 'must be a JSON object');
  }
  for (const key of Object.keys(body)) {
    if (!takes.includes(key)) {
      const which = takes.length === 0 ? 'it takes none' : `it takes ${takes.join(', ')}`;
      throw errors.invalidOption(key, `is not a field of this request (${which})`);
    }
  }
  return body as Record<string, unknown>;
}
