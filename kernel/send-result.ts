import type { EventOrigin, FrontierWork } from '../machines/index.js';
import type { IndexClaim, NewObject } from '../store/index.js';

/** What `send` answers: admitted, retained with a rejection (written), or refused (nothing written). */
export interface SendResult {
  admitted: boolean;
  /** True when the event was appended; false when it was refused and nothing was written. */
  written: boolean;
  code?: string;
  detail?: string;
  /** Field path of the offending input, for `invalid_event`. */
  path?: string;
  /** The revision of the event taken (for a duplicate, of its first delivery); the current one when refused. */
  revision: number;
  state: string;
  duplicate?: boolean;
  /** With `task_elsewhere`: the Host serving the Task (null while its lease is free) and the URL it advertises (null: none published). */
  host?: string | null;
  url?: string | null;
}

/** Objects, blobs and claims the Host attaches to one of its own events (written in the same commit). */
export interface Attachments {
  objects?: NewObject[];
  blobs?: Uint8Array[];
  claims?: IndexClaim[];
}

/** What subscribers hear of each committed event. */
export interface Committed {
  taskId: string;
  revision: number;
  type: string;
  origin: EventOrigin;
  state: string;
  frontier: FrontierWork;
  admitted: boolean;
  code?: string;
  /**
   * With a cluster (`store: 'postgres://…'`): the Host that wrote the event. A subscriber hears
   * this Host's own commits and, from the watch, those of Tasks other Hosts serve.
   */
  host?: string;
}

/** `send`'s answer for a Task the supervisor does not have (nothing written). */
export function taskNotFound(taskId: string): SendResult {
  return {
    admitted: false,
    written: false,
    code: 'task_not_found',
    detail: `no task ${taskId}`,
    revision: 0,
    state: 'none',
  };
}
