// The OS layer's public face: process identity, liveness, starting and termination. Imports
// nothing of ours.
export {
  isPid,
  listProcessGroup,
  listProcesses,
  readCmdline,
  readEnviron,
  readProcStat,
  scanProcesses,
  startTimeNow,
} from './proc-stat.js';
export type { ProcStat } from './proc-stat.js';
export { currentBootId, identityOf, isZombie, pidExists, sameIdentity } from './identity.js';
export type { ProcessIdentity } from './identity.js';
export { runMarker, terminateMarkedRun, terminateProcess, terminateRun } from './terminate.js';
export type { RunProof, TerminateOptions, TerminateResult } from './terminate.js';
export { processUsage } from './usage.js';
export type { Usage } from './usage.js';
export { waitUntil } from './wait.js';
export { bootNowMs } from './boot-clock.js';
export { startProcess } from './start-process.js';
export { signalName } from './signals.js';
export { LINUX } from './platform.js';
export type { ProcessEnd, StartedProcess, StartSpec } from './start-process.js';
