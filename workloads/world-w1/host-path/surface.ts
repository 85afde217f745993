import { z } from 'zod';
import type { EffectAdapter } from '../../../frontier/index.js';
import type { TaskSpecInput } from '../../../objects/index.js';
import type { W1Trajectory } from './faults.js';

/** How a child process (host-child.ts) makes the same surface again: JSON on its command line. */
export const W1SurfaceArgs = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('provider'), url: z.url(), dir: z.string().min(1) }),
  z.strictObject({
    kind: z.literal('webapp'),
    url: z.url(),
    db: z.string().min(1),
    identity: z.string().min(1),
    executablePath: z.string().min(1),
  }),
]);
export type W1SurfaceArgs = z.infer<typeof W1SurfaceArgs>;

/**
 * What the Host path needs of the system it performs on (the provider behind the HTTP adapter, the
 * web app behind the browser adapter), so one harness (run.ts, sequence.ts) drives the same Task
 * through either: the adapters, each trajectory's Task and fault, the incidents, and the records
 * every count is read from.
 */
export interface W1HostSurface {
  readonly args: W1SurfaceArgs;
  /** The Host's adapter timeout on a trajectory: short only for the answer its fault holds past it. */
  timeoutOf(trajectory: W1Trajectory): number;
  /** The adapters to register, by the name the Task's candidate uses. */
  adapters(timeoutMs: number, state: string): Record<string, EffectAdapter>;
  /** Where the agent moves the world while it decides (`identity-changed`, `target-changed`): the URL and the JSON body it POSTs. */
  agentFault(trajectory: W1Trajectory): { url: string; body: unknown } | undefined;
  /** Readies the trajectory's target and its fault on the system; resolves with its Task spec. */
  prepare(trajectory: W1Trajectory): Promise<TaskSpecInput>;
  /** Resolves once the trajectory's perform is committed and its answer held (a wait on another process). */
  holding(trajectory: W1Trajectory): Promise<void>;
  /** `provider-restart`, with the answer held: the system's process SIGKILLed and started again on the same records. */
  restart(): Promise<void>;
  /** `lookup-expired` (the provider only): its clock moved past the lookup window. */
  expireLookups?(): Promise<void>;
  /** Switches off what a trajectory left (a held answer, a fault, another identity). */
  reset(): Promise<void>;
  /** The trajectory's performs in the system's own records file, each with the target version it was done on. */
  performs(trajectory: W1Trajectory): Array<{ targetVersion: string }>;
}
