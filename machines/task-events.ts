/**
 * Events of the Task statechart. Plain JSON; the kernel validates their payloads with zod
 * (actors/task-event-schemas.ts) before any of them reaches the machine.
 *
 * Every event carries the stream `revision` it will occupy once appended and its `origin`:
 * `host` for facts the Host establishes, `external` for events from scripts, the CLI or a service.
 */
export type EventOrigin = 'host' | 'external';

export interface Envelope {
  revision: number;
  origin: EventOrigin;
}

export type TaskEvent = Envelope &
  (
    | { type: 'task.created'; taskId: string; attempt: number; specDigest: string; requiredArtifacts: string[] }
    | { type: 'assignment.commit'; generation: number; harness: string; purpose: string; assignmentDigest: string }
    | { type: 'context.compile'; generation: number; contextDigest: string }
    | { type: 'dispatch.intend'; generation: number; clientRequestId: string }
    | { type: 'dispatch.ack'; clientRequestId: string; jobId: string }
    | { type: 'dispatch.lost'; clientRequestId: string }
    | { type: 'dispatch.reconcile'; clientRequestId: string; jobIds: string[] }
    | {
        type: 'run.observe';
        generation: number;
        clientRequestId: string;
        contextDigest: string;
        receiptDigest: string;
        jobStatus: string;
        /** Artifacts of this run that the Host validated, name → digest. */
        evidence: Record<string, string>;
        /** Artifacts this run wrote that the Host did not retain, name → why (recorded, not used by guards). */
        refused?: Record<string, string>;
        /** Host-computed source digest (artifacts excluded) when the run ended (recorded, not used by guards). */
        sourceDigest?: string;
      }
    | {
        type: 'completion.propose';
        generation: number;
        contextDigest: string;
        proposalDigest: string;
        /** The evidence the proposal relies on, name → digest; must match what the Host holds. */
        evidence: Record<string, string>;
      }
    | { type: 'evaluation.settle'; generation: number }
    | {
        type: 'verification.record';
        generation: number;
        passed: boolean;
        verificationDigest: string;
        sourceDigest: string;
        /** Present when `passed`: the TaskOutcome object the Host wrote before this event. */
        outcomeDigest: string | null;
      }
    | { type: 'task.cancel'; reason: string }
  );

export type TaskEventType = TaskEvent['type'];

/** Event types that scripts, the CLI and services may send. Everything else is a Host-only fact. */
export const EXTERNAL_EVENT_TYPES: readonly TaskEventType[] = [
  'assignment.commit',
  'completion.propose',
  'task.cancel',
];

/** Every event type, in the order of the lifecycle. */
export const TASK_EVENT_TYPES: readonly TaskEventType[] = [
  'task.created',
  'assignment.commit',
  'context.compile',
  'dispatch.intend',
  'dispatch.ack',
  'dispatch.lost',
  'dispatch.reconcile',
  'run.observe',
  'completion.propose',
  'evaluation.settle',
  'verification.record',
  'task.cancel',
];
