// Plain fixed-width tables for the terminal: the first column left-aligned,
// figures right-aligned, and columns of free text (named by `leftAlign`, or the
// last one with `leftAlignLast`) left-aligned.
export function table(
  headers: string[],
  rows: (string | number)[][],
  options: { leftAlignLast?: boolean; leftAlign?: number[] } = {},
): string {
  const cells = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, c) => Math.max(...cells.map((row) => (row[c] ?? '').length)));
  const last = headers.length - 1;
  const leftColumns = new Set([0, ...(options.leftAlign ?? [])]);
  if (options.leftAlignLast === true) leftColumns.add(last);
  const left = (c: number) => leftColumns.has(c);
  const line = (row: string[]) =>
    row
      .map((cell, c) => {
        // A left-aligned last column is not padded: no trailing blanks.
        if (c === last && left(c)) return cell;
        return left(c) ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0);
      })
      .join('  ');
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join(
    '\n',
  );
}
