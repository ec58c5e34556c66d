// Plain fixed-width tables for the terminal: the first column left-aligned,
// figures right-aligned, and optionally a last column of free text left-aligned.
export function table(
  headers: string[],
  rows: (string | number)[][],
  options: { leftAlignLast?: boolean } = {},
): string {
  const cells = [headers, ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, c) => Math.max(...cells.map((row) => (row[c] ?? '').length)));
  const last = headers.length - 1;
  const left = (c: number) => c === 0 || (options.leftAlignLast === true && c === last);
  const line = (row: string[]) =>
    row
      .map((cell, c) => {
        // A free-text last column is not padded: no trailing blanks.
        if (c === last && left(c)) return cell;
        return left(c) ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0);
      })
      .join('  ');
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join(
    '\n',
  );
}
