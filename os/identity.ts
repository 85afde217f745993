// Process identity read from /proc, without the process-group half of os/ (and so without execa):
// the store's lock and gate files check their holder with these, and `ordivon list` must not load
// a child-process library to read a state root. os/index.ts re-exports all of it.
export {
  parseProcStat,
  readProcStat,
  procStat,
  processStartTicks,
  isLiveState,
  listPids,
  bootId,
  type ProcStat,
} from './proc-stat.js';
export { pidExists, processAlive, processRunning, isExecutable } from './process-identity.js';
