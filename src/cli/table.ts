// Plain fixed-width tables for the terminal.
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, c) => Math.max(...cells.map((row) => (row[c] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
      .join('  ');
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join(
    '\n',
  );
}
