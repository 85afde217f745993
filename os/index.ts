// The operating system's side of processes: identity read from /proc, process groups, their stop,
// and this process's own write and CPU counters.
// A leaf: imports only node:*, execa and zod (which parses what bwrap reports of its sandbox).
export * from './identity.js';
export {
  spawnGroup,
  signalGroup,
  groupAlive,
  groupLeader,
  ownsGroup,
  type GroupChild,
  type GroupLeader,
} from './process-group.js';
export { livingGroupMembers, groupRunning } from './group-members.js';
export {
  descendantsOf,
  memberRunning,
  signalMembers,
  mergeMembers,
  treeCpuMs,
  type TreeMember,
} from './process-tree.js';
export {
  stopGroup,
  waitUntil,
  type GroupStop,
  type GroupGone,
  type GroupStopOptions,
  type GroupStopReport,
} from './stop-group.js';
export { jobSandboxes, killJobSandboxes, markedSandboxes, type MarkedSandboxes } from './job-sandboxes.js';
export {
  sandboxCommand,
  jobMarker,
  probeSandbox,
  SandboxRefused,
  SandboxCommandMissing,
  NOBODY,
  DEFAULT_SANDBOX_LIMITS,
  type Sandbox,
  type SandboxLimits,
  type SandboxProbe,
  type SandboxedCommand,
} from './sandbox.js';
export { killLeftovers, waitUntilStopped, LEFTOVER_POLL_MS } from './leftovers.js';
export { parseProcIo, readProcIo, threadCpuNs, type ProcIo } from './proc-io.js';
