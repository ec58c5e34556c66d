// Starts a worker thread's bundle (dist/workers/<name>.bundle.cjs) from the V8 code cache an
// earlier start left, and leaves one when there was none.
//
// Why: every actor is a fresh isolate that parses the same 790 KB bundle and compiles each
// function its start-up runs, and ten of them start at once (bench/start-cost: ten actors and
// the coordinator cost ~2.4 CPU-s to start, ~0.9 of it Node's own bootstrap). V8 keeps that
// work in a code cache: bytecode made by one isolate that the next ones take instead of
// compiling. Node 20 takes a cache only for scripts (vm.Script cachedData), not for ES
// modules, so these bundles are CommonJS, wrapped here the way require() wraps a file.
//
// The cache sits in dist/.v8-cache, beside the code it came from and as trusted: it is named
// by the bundle's content hash (the build writes it into the entry that calls this) and V8's
// version, and V8 refuses one made under other flags. One thread writes it, two seconds
// after its bundle started, so the functions the start-up and the first messages compiled
// are in it. A cache that cannot be read or written (a read-only install) only means the
// threads compile as before; so does a Node without vm's main-context loader (before 20.12).
// An import() compiled into the bundle fails once the bundle runs from a cache on Node 20, so
// the actor loads the user's handler with this module's import() instead (handler-load.ts).
import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

/**
 * How long after its start a thread writes the cache: its start-up and first rounds ran, and a
 * launcher that lives a few seconds (`skyq start` for one `produce`) still leaves one.
 */
const WRITE_AFTER_MS = 2_000;
/** A half-written cache older than this was left by a thread that died: another may write. */
const STALE_WRITE_MS = 60_000;

interface Bundle {
  /** `importer`: this module's import(), for the handlers an actor loads (handler-load.ts) */
  main(importer: (url: string) => Promise<unknown>): unknown;
}

const importer = (url: string): Promise<unknown> => import(url);

export interface BundleStart {
  /** the CommonJS bundle */
  bundle: URL;
  /** the start of its sha-256, in hex: what the cache is named by */
  hash: string;
  /** where caches are kept */
  cacheDir: URL;
  /** when the cache is written after the bundle's main() resolved (WRITE_AFTER_MS) */
  writeAfterMs?: number;
}

/** What became of the code cache: none yet, taken, refused by V8, or not usable on this Node. */
export type CacheOutcome = 'none' | 'accepted' | 'rejected' | 'unsupported';

/**
 * Runs the bundle's main() from the code cache when there is one, and resolves when main()
 * has (the thread goes on serving after). Leaves a cache later where none was taken.
 */
export async function startBundle(start: BundleStart): Promise<CacheOutcome> {
  const file = fileURLToPath(start.bundle);
  // Node 20.12 and newer: import() inside the script loads as the thread's own import() does.
  // (A symbol at run time; @types/node calls it a number.)
  const loader = (vm.constants as unknown as { USE_MAIN_CONTEXT_DEFAULT_LOADER?: symbol })
    .USE_MAIN_CONTEXT_DEFAULT_LOADER;
  if (loader === undefined) {
    await (createRequire(file)(file) as Bundle).main(importer);
    return 'unsupported';
  }
  const cacheDir = fileURLToPath(start.cacheDir);
  const cacheFile = join(cacheDir, `${basename(file)}-${start.hash}-${process.versions.v8}.bin`);
  const cachedData = readIfThere(cacheFile);
  // The same wrapper require() puts around a CommonJS file, on the first line so that
  // stack traces keep the bundle's line numbers.
  const source = `(function (exports, require, module, __filename, __dirname) { ${readFileSync(file, 'utf8')}\n})`;
  const script = new vm.Script(source, {
    filename: file,
    cachedData,
    importModuleDynamically: loader as never, // the option's type has no room for the symbol
  });
  const module = { exports: {} as Bundle };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper(module.exports, createRequire(file), module, file, dirname(file));
  await module.exports.main(importer);
  if (cachedData !== undefined && !script.cachedDataRejected) return 'accepted';
  const writeAfterMs = start.writeAfterMs ?? WRITE_AFTER_MS;
  setTimeout(() => writeOnce(cacheDir, cacheFile, script), writeAfterMs).unref();
  return cachedData === undefined ? 'none' : 'rejected';
}

function readIfThere(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined; // none yet, or unreadable: compile as without one
  }
}

/**
 * Writes the script's code cache unless another thread is writing it: the half-written file
 * is the lock (created exclusively), renamed into place once whole, so no thread reads a
 * partial cache.
 */
function writeOnce(dir: string, file: string, script: vm.Script): void {
  const partial = `${file}.writing`;
  try {
    mkdirSync(dir, { recursive: true });
    let fd: number;
    try {
      fd = openSync(partial, 'wx');
    } catch {
      if (Date.now() - statSync(partial).mtimeMs < STALE_WRITE_MS) return;
      rmSync(partial, { force: true });
      fd = openSync(partial, 'wx');
    }
    try {
      writeSync(fd, script.createCachedData());
    } finally {
      closeSync(fd);
    }
    renameSync(partial, file);
  } catch {
    // A read-only install or a full disk: threads keep compiling as they did.
  }
}
