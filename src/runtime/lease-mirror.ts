// The leases an actor holds, mirrored in shared memory that its supervisor can still read once
// the thread is gone (ended as hung, process.exit() in a handler, out of heap, a kill): the
// launcher then hands them back at once, saying why (hand-back.ts), where each waited for its
// lease to run out before. Written once per claim (its token and ids) and forgotten when the
// claim's last job ends: a job costs a counter and a byte, no message and no timer. Bounded:
// what does not fit is not mirrored, and comes back by lease expiry as before.
//
// One writer (the actor), read only after it is dead: an entry's length is stored last
// (Atomics), so a thread ended mid-write leaves that entry unread, never a torn one read.
import type { Message } from '../queue/message.js';

/** Claims mirrored at once (an actor holds at most `concurrency` jobs, from as many claims). */
const SLOTS = 512;
/** Per slot: the entry's length in bytes (0: none), its offset in the arena. */
const SLOT_INTS = 2;
const ARENA_AT = SLOTS * SLOT_INTS * Int32Array.BYTES_PER_ELEMENT;
/** ~2,700 leases of 16-byte ids; a claim's entry is its token, then index, length, id each. */
const ARENA_BYTES = 64 * 1024;
/** The size of a mirror's buffer: one is made for each thread an actor starts. */
export const LEASE_MIRROR_BYTES = ARENA_AT + ARENA_BYTES;
/** Tokens are "<counter>.<µs>" (claim.lua): ASCII, far shorter than this. */
const MAX_TOKEN = 255;
/** index and length of each id, 32 bits each */
const ID_HEAD = 8;
/** After a compaction that left the arena over half full, claims that find no room before the next. */
const CALM_CLAIMS = 16;

/** One claim's leases as a dead thread's mirror holds them: ids are their exact bytes. */
export interface MirroredClaim {
  token: string;
  ids: Buffer[];
}

/** A mirrored claim, as its jobs see it: each of them ends once (InFlight.delete). */
export class HeldClaim {
  readonly #mirror: LeaseMirror;
  readonly slot: number;
  /** by the message's place in the claim: 1 once it ended (compaction drops it) */
  readonly ended: Uint8Array;
  #left: number;
  #next = 0;

  constructor(mirror: LeaseMirror, slot: number, size: number) {
    this.#mirror = mirror;
    this.slot = slot;
    this.ended = new Uint8Array(size);
    this.#left = size;
  }

  /** The place of the next of its messages to be held (they are held in the claim's order). */
  place(): number {
    return this.#next++;
  }

  /** The job at `place` ended: the claim is forgotten with its last one. */
  end(place: number): void {
    this.ended[place] = 1;
    if (--this.#left === 0) this.#mirror.forget(this);
  }
}

export class LeaseMirror {
  readonly buffer: SharedArrayBuffer;
  readonly #lengths: Int32Array;
  readonly #bytes: Buffer;
  readonly #view: DataView;
  readonly #claims: (HeldClaim | undefined)[] = new Array(SLOTS);
  readonly #free: number[] = [];
  /** where the next entry goes; nothing live lies past it */
  #end = 0;
  #live = 0;
  /** claims left unmirrored before compacting again, after a compaction that freed little */
  #calm = 0;

  constructor(buffer = new SharedArrayBuffer(LEASE_MIRROR_BYTES)) {
    this.buffer = buffer;
    this.#lengths = new Int32Array(buffer, 0, SLOTS * SLOT_INTS);
    this.#bytes = Buffer.from(buffer, ARENA_AT, ARENA_BYTES);
    this.#view = new DataView(buffer, ARENA_AT, ARENA_BYTES);
    for (let slot = SLOTS - 1; slot >= 0; slot--) this.#free.push(slot);
  }

  /** Mirrors one claim's leases; null when none of them fits (they come back by expiry). */
  hold(messages: readonly Message[]): HeldClaim | null {
    const token = messages[0]?.token;
    if (token === undefined || token.length === 0 || token.length > MAX_TOKEN) return null;
    const slot = this.#free.pop();
    if (slot === undefined) return null;
    let end = this.#write(this.#end, token, messages);
    if (end.count < messages.length && this.#live > 0 && this.#calm-- <= 0) {
      this.#compact();
      // Full of jobs still running: compacting at every claim would cost each one the arena.
      this.#calm = this.#end > ARENA_BYTES / 2 ? CALM_CLAIMS : 0;
      end = this.#write(this.#end, token, messages);
    }
    if (end.count === 0) {
      this.#free.push(slot);
      return null;
    }
    const claim = new HeldClaim(this, slot, messages.length);
    this.#claims[slot] = claim;
    this.#live++;
    this.#commit(slot, this.#end, end.at - this.#end);
    this.#end = end.at;
    return claim;
  }

  /** @internal HeldClaim.end: its last job ended. */
  forget(claim: HeldClaim): void {
    const slot = claim.slot;
    if (this.#claims[slot] !== claim) return;
    Atomics.store(this.#lengths, slot * SLOT_INTS, 0);
    this.#claims[slot] = undefined;
    this.#free.push(slot);
    if (--this.#live === 0) this.#end = 0;
  }

  #commit(slot: number, offset: number, length: number): void {
    this.#lengths[slot * SLOT_INTS + 1] = offset;
    Atomics.store(this.#lengths, slot * SLOT_INTS, length);
  }

  /** Writes token and ids from `at`, as many ids as fit; returns where it ended, and how many. */
  #write(at: number, token: string, messages: readonly Message[]): { at: number; count: number } {
    if (at + 1 + token.length + ID_HEAD > ARENA_BYTES) return { at, count: 0 };
    const bytes = this.#bytes;
    bytes[at] = token.length;
    bytes.write(token, at + 1, 'latin1');
    let pos = at + 1 + token.length;
    let count = 0;
    for (; count < messages.length; count++) {
      const message = messages[count] as Message;
      const id = message.idBytes ?? message.id;
      let length: number;
      if (typeof id !== 'string') {
        if (pos + ID_HEAD + id.length > ARENA_BYTES) break;
        length = id.copy(bytes, pos + ID_HEAD);
      } else if (pos + ID_HEAD + 3 * id.length <= ARENA_BYTES) {
        length = bytes.write(id, pos + ID_HEAD, 'utf8'); // fits whatever its characters (≤ 3 bytes each)
      } else {
        length = Buffer.byteLength(id);
        if (pos + ID_HEAD + length > ARENA_BYTES) break;
        bytes.write(id, pos + ID_HEAD, 'utf8');
      }
      this.#view.setUint32(pos, count, true);
      this.#view.setUint32(pos + 4, length, true);
      pos += ID_HEAD + length;
    }
    return { at: pos, count };
  }

  /**
   * Moves the live entries to the arena's start, without the ids whose jobs ended. Each entry
   * moves down (never over one not moved yet), and is unread while it moves: a thread ended
   * meanwhile loses that claim's mirror, nothing else.
   */
  #compact(): void {
    const live: HeldClaim[] = [];
    for (const claim of this.#claims) if (claim) live.push(claim);
    live.sort((a, b) => this.#offsetOf(a.slot) - this.#offsetOf(b.slot));
    const bytes = this.#bytes;
    const view = this.#view;
    let to = 0;
    for (const claim of live) {
      const slot = claim.slot;
      const from = this.#offsetOf(slot);
      const length = this.#lengths[slot * SLOT_INTS] as number;
      if (length === 0) continue;
      Atomics.store(this.#lengths, slot * SLOT_INTS, 0);
      const head = 1 + (bytes[from] as number);
      bytes.copyWithin(to, from, from + head);
      let write = to + head;
      for (let read = from + head; read < from + length; ) {
        const size = ID_HEAD + view.getUint32(read + 4, true);
        if (claim.ended[view.getUint32(read, true)] !== 1) {
          bytes.copyWithin(write, read, read + size);
          write += size;
        }
        read += size;
      }
      if (write === to + head) continue; // its mirrored jobs all ended: nothing left to tell
      this.#commit(slot, to, write - to);
      to = write;
    }
    this.#end = to;
  }

  #offsetOf(slot: number): number {
    return this.#lengths[slot * SLOT_INTS + 1] as number;
  }
}

/**
 * What a dead thread's mirror holds: its claims' tokens and the ids of their leases. Read by
 * the launcher once the thread is gone; anything that does not parse is left out.
 */
export function mirroredLeases(buffer: SharedArrayBuffer): MirroredClaim[] {
  const lengths = new Int32Array(buffer, 0, SLOTS * SLOT_INTS);
  const bytes = Buffer.from(buffer, ARENA_AT, ARENA_BYTES);
  const view = new DataView(buffer, ARENA_AT, ARENA_BYTES);
  const out: MirroredClaim[] = [];
  for (let slot = 0; slot < SLOTS; slot++) {
    const length = Atomics.load(lengths, slot * SLOT_INTS);
    const from = lengths[slot * SLOT_INTS + 1] as number;
    if (length <= 0 || from < 0 || from + length > ARENA_BYTES) continue;
    const end = from + length;
    const head = 1 + (bytes[from] as number);
    if (head === 1 || from + head > end) continue;
    const token = bytes.toString('latin1', from + 1, from + head);
    const ids: Buffer[] = [];
    for (let read = from + head; read + ID_HEAD <= end; ) {
      const size = view.getUint32(read + 4, true);
      if (read + ID_HEAD + size > end) break;
      ids.push(Buffer.from(bytes.subarray(read + ID_HEAD, read + ID_HEAD + size)));
      read += ID_HEAD + size;
    }
    if (ids.length > 0) out.push({ token, ids });
  }
  return out;
}
