// A message body as text for the page, cut to a length. The page shows it with textContent, so
// whatever it holds (markup included) stays text.
import type { Body } from '../record.js';

export interface Preview {
  text: string;
  /** characters the full text has */
  length: number;
  truncated: boolean;
}

export function preview(body: Body, max: number): Preview {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    text: text.length > max ? text.slice(0, max) : text,
    length: text.length,
    truncated: text.length > max,
  };
}
