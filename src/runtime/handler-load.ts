// Loading the user's handler module, and saying why it could not load in one line a newcomer
// can act on: a syntax error with its line and column (Node gives them for CommonJS only, so
// an ES module is asked again with `node --check`), and ES module syntax in a `.js` that Node
// loads as CommonJS explained, without Node's own two-line warning printed before it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errors } from '../base/errors.js';
import { readThrown } from '../queue/thrown.js';

/** A handler module URL as a person reads it: its path, for a file. */
export function shownHandler(url: string): string {
  return url.startsWith('file:') ? fileURLToPath(url) : url;
}

/** import() of a module URL, as some module's own import() does it. */
export type Importer = (url: string) => Promise<unknown>;

/**
 * The import() that loads handlers. An actor's bundle runs from V8's code cache
 * (bundle-start.ts), where an import() compiled into the bundle fails on Node 20 (the cached
 * code has lost its import callback): its entry hands in the import() of a real module.
 */
let load: Importer = (url) => import(url);

export function useImporter(importer: Importer): void {
  load = importer;
}

/** A module's namespace, boxed (see importModule). */
export interface LoadedModule {
  exports: Record<string, unknown>;
}

/**
 * import() of the handler module; rejects with one readable line when it cannot load.
 *
 * A command table may have an entry named `then` (a job may be called that), and a namespace
 * with a `then` export is a thenable: a promise resolved with it calls the export instead of
 * resolving (the start hung). So the module is imported by a one-line module that hands its
 * namespace on as a property, and the namespace leaves here in a box.
 */
export async function importModule(url: string): Promise<LoadedModule> {
  const unmute = muteModuleHint();
  const source = `import * as exports from ${JSON.stringify(url)};\nexport { exports };\n`;
  // Node 20 reports a CommonJS module that throws while a static import loads it twice: the
  // import() rejects, and an internal promise rejects with the same error, unhandled (which
  // would end the thread). That echo is dropped; any other unhandled rejection goes on.
  let failed: unknown;
  const dropEcho = (reason: unknown) => {
    if (reason !== failed) throw reason;
  };
  process.on('unhandledRejection', dropEcho);
  try {
    const loaded = (await load(
      `data:text/javascript,${encodeURIComponent(source)}`,
    )) as LoadedModule;
    return { exports: loaded.exports };
  } catch (error) {
    failed = error;
    const path = shownHandler(url);
    throw errors.actor(`cannot load handler ${path}: ${explain(error as Error, path)}`, error);
  } finally {
    // Node emits its warning, and the echo, on a later tick: keep both handled until then.
    setImmediate(() => {
      unmute();
      process.off('unhandledRejection', dropEcho);
    });
  }
}

/**
 * Node warns "To load an ES module, set "type": "module" …" (two lines on stderr) before the
 * SyntaxError that explain() turns into advice: drop that one warning while the module loads,
 * and pass every other warning on to Node's own printing.
 */
function muteModuleHint(): () => void {
  const listeners = process.listeners('warning');
  const filter = (warning: Error) => {
    if (/^To load an ES module/.test(warning.message)) return;
    for (const listener of listeners) listener.call(process, warning);
  };
  process.removeAllListeners('warning');
  process.on('warning', filter);
  return () => {
    process.off('warning', filter);
    for (const listener of listeners) process.on('warning', listener);
  };
}

function explain(error: Error, path: string): string {
  // A module may throw anything at its top level (null, a string): read it safely.
  const thrown = readThrown(error);
  const message = thrown.message.split('\n')[0] as string;
  if (thrown.name !== 'SyntaxError') return message;
  const where = locate(error.stack ?? '') ?? locate(checkSyntax(path));
  const esmSyntax = /Unexpected token 'export'|Cannot use import statement outside a module/;
  if (extname(path) === '.js' && esmSyntax.test(message)) {
    const keyword = /'export'/.test(message) ? 'export' : 'import';
    const at = where ? `, line ${where.line}` : '';
    const mjs = `${basename(path, '.js')}.mjs`;
    return `it uses ES module syntax (${keyword}${at}), but Node loads a .js file as CommonJS here (${packageOf(path)}): rename it ${mjs}, or write module.exports = … instead`;
  }
  if (!where) return `SyntaxError: ${message}`;
  const column = where.column === undefined ? '' : `, column ${where.column}`;
  return `SyntaxError at line ${where.line}${column}: ${message}`;
}

/**
 * "file:2\n  source\n      ^" at the start of a syntax error's stack, as Node prints it. At
 * the end of the file (a brace never closed) the source line is empty and there is no caret:
 * the line alone.
 */
function locate(text: string): { line: number; column?: number } | undefined {
  const [head, , caret] = text.split('\n');
  const line = /:(\d+)$/.exec(head ?? '')?.[1];
  if (line === undefined) return undefined;
  const column = (caret ?? '').indexOf('^');
  return column < 0 ? { line: Number(line) } : { line: Number(line), column: column + 1 };
}

/** What `node --check` says of the file (for an ES module, whose import() error has no place). */
function checkSyntax(path: string): string {
  const run = spawnSync(process.execPath, ['--no-warnings', '--check', path], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return run.stderr ?? '';
}

/** Which package.json makes the file CommonJS, said as a reason. */
function packageOf(path: string): string {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    try {
      const type = (JSON.parse(readFileSync(file, 'utf8')) as { type?: unknown }).type;
      return type === undefined
        ? `${file} has no "type": "module"`
        : `${file} says "type": ${JSON.stringify(type)}`;
    } catch {
      // none here (or unreadable): look further up
    }
    if (dirname(dir) === dir) return 'no package.json above it says "type": "module"';
  }
}
