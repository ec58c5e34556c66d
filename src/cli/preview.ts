// Message bodies and log text shown in a terminal: shortened, and with control
// characters escaped, so a body cannot move the cursor or recolour the screen.

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** What a done job's body (over 64 KiB, spilled) shows: history keeps the rest of it, not that. */
export const NOT_KEPT = '(not kept: over 64 KiB)';

/** Text safe to print: escaped (as a JSON string) when it holds control characters. */
export function printable(text: string): string {
  return CONTROL.test(text) ? JSON.stringify(text) : text;
}

/** A body in at most `max` characters: strings as they are, other values as JSON. */
export function preview(body: unknown, max = 60): string {
  const text = printable(typeof body === 'string' ? body : (JSON.stringify(body) ?? String(body)));
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A Redis error without the script and line that met it: they say nothing to an operator. */
export function withoutScriptLocation(message: string): string {
  return message.replace(/\s*script: [0-9a-f]+, on @user_script:\d+\.?$/, '');
}
