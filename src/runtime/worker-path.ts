// worker_threads cannot load .ts on Node 20, so workers always start from the
// compiled files in dist/. From dist/src/runtime this is next door; from the
// TypeScript sources (vitest runs them) it is the dist/ build of the repo.
export function workerFile(name: 'actor' | 'coordinator' | 'handler-task'): URL {
  const here = import.meta.url;
  if (here.endsWith('.ts')) return new URL(`../../dist/workers/${name}.js`, here);
  return new URL(`../../workers/${name}.js`, here);
}
