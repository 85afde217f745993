import { StoreError } from './errors.js';
import {
  createExclusive,
  describeHolder,
  holderGone,
  parseHolder,
  readHolder,
  readText,
  removeStale,
  sameHolder,
  selfHolder,
  sleepSync,
  unlinkQuietly,
} from './holder-file.js';

/** How long a live holder may keep an environment's gate before a waiter gives up (`state_locked`). */
const GATE_PATIENCE_MS = 60_000;

/**
 * Takes the open/close gate of the LMDB environment at `envDir`: a file `<envDir>.gate`, created
 * exclusively and naming its holder. Every process opens and closes an environment only inside it.
 *
 * Why: lmdb (3.5, robust POSIX mutexes in `lock.mdb`) lets the last process closing an environment
 * destroy the lock region's mutexes, while a process opening it at that moment, which lost the race
 * for the exclusive lock, waits for the shared lock and then uses the destroyed mutexes: every
 * transaction of that process, and of every process opening after it while it stays open, fails
 * `EINVAL`. Opens and closes never overlap while they take this gate. Readers take it too.
 *
 * Waits (synchronously, backing off up to 20 ms) while another live process holds the gate; a gate
 * this process holds already is entered again; a gate whose holder died (pid gone, or reused: its
 * start time differs; another boot) is taken over by exactly one waiter.
 * Returns the release function. Fails `state_locked` after a minute behind a live holder. Where no
 * file can be written (read-only or full file system, directory gone) it gates nothing and returns.
 */
export function enterEnvGate(envDir: string): () => void {
  const path = `${envDir}.gate`;
  const mine = selfHolder();
  const deadline = Date.now() + GATE_PATIENCE_MS;
  for (let wait = 1; ; wait = Math.min(wait * 2, 20)) {
    const created = createExclusive(path, mine);
    // Without a writable directory there is nothing to gate: lmdb then keeps no lock region for a
    // read-only open either, and a writable open fails on its own.
    if (created === 'unavailable') return () => {};
    if (created === 'created') {
      return () => {
        // Unlink only our own gate; a holder never loses its gate, so this is a plain check.
        if (sameHolder(readHolder(path), mine)) unlinkQuietly(path);
      };
    }
    const text = readText(path);
    const holder = text === undefined ? undefined : parseHolder(text);
    // lmdb-js serialises one process's opens and closes of an environment itself (one shared
    // MDB_env per file), and a thread of this process waiting for its own gate would never see it freed.
    if (sameHolder(holder, mine)) return () => {};
    if (holder !== undefined && holderGone(path, holder)) removeStale(path, text!);
    else if (Date.now() > deadline) {
      throw new StoreError(
        'state_locked',
        `the open/close gate ${path} is held by ${describeHolder(holder)} for more than ${GATE_PATIENCE_MS / 1000} s`,
        { root: envDir },
        { retryable: true },
      );
    } else sleepSync(wait);
  }
}
