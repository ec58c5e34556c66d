// comlink's package points Node at its UMD build; we load the ESM build by
// path, which ships no .d.mts. These shims give those paths comlink's types.
declare module 'comlink/dist/esm/comlink.mjs' {
  export * from 'comlink';
}

declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';

  export interface NodeEndpoint {
    postMessage(message: unknown, transfer?: readonly never[]): void;
    on(type: string, listener: (value: unknown) => void): void;
    off(type: string, listener: (value: unknown) => void): void;
    start?: () => void;
  }
  export default function nodeEndpoint(endpoint: NodeEndpoint): Endpoint;
}
