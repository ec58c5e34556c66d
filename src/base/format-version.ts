/** The data format this skyq writes and reads up to (what each version changed: src/queue/format.ts). */
export const FORMAT_VERSION = 8;
