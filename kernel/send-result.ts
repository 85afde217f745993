import type { HostErrorCode } from './errors.js';
import type { EventOrigin, FrontierWork, RejectionReason } from '../machines/index.js';
import type { IndexClaim, NewObject } from '../store/index.js';

/**
 * The rejection a stored event was retained with, as a duplicate reads it back: a
 * `RejectionReason`, or the code of an earlier release for an event it wrote.
 */
export type RejectionCode = string;

/** Where a send left the Task: its revision and state. */
export interface SendAt {
  /** The revision of the event taken (for a duplicate, of its first delivery); the current one when refused. */
  revision: number;
  /** The Task's state; `NO_STATE` when this Host holds no state of it (a refusal for a Task it does not serve). */
  state: string;
}

/**
 * The `state` of a refusal for a Task this Host holds no state of (`task_not_found`,
 * `task_elsewhere`, `storage_failed` while it cannot tell): with `revision` 0, one value that no
 * Task state is, rather than a made-up state per refusal.
 */
export const NO_STATE = 'none';

/** Where a refusal leaves a Task this Host holds no state of. */
const NOWHERE: SendAt = { revision: 0, state: NO_STATE };

/** What a send came to: the discriminant of `SendResult`. */
export type SendKind = SendResult['kind'];

// Each kind declares the fields it never carries as `?: undefined`, so each stays readable on the union.

/** The event was appended and the Task took it. */
export interface SendAdmitted extends SendAt {
  kind: 'admitted';
  admitted: true;
  written: true;
  code?: undefined;
  detail?: undefined;
  path?: undefined;
  duplicate?: undefined;
  host?: undefined;
  url?: undefined;
}

/** The event was appended with the rejection the statechart recorded. */
export interface SendRetained extends SendAt {
  kind: 'retained';
  admitted: false;
  written: true;
  code: RejectionReason;
  detail?: string;
  path?: undefined;
  duplicate?: undefined;
  host?: undefined;
  url?: undefined;
}

/** A retry of an event already stored: answered with how its first delivery was taken, nothing written. */
export interface SendDuplicate extends SendAt {
  kind: 'duplicate';
  /** Whether its first delivery was admitted. */
  admitted: boolean;
  written: false;
  duplicate: true;
  /** The first delivery's rejection, when it was retained. */
  code?: RejectionCode;
  detail?: undefined;
  path?: undefined;
  host?: undefined;
  url?: undefined;
}

/** Refused: nothing was written. */
export interface SendRefused extends SendAt {
  kind: 'refused';
  admitted: false;
  written: false;
  code: HostErrorCode;
  detail: string;
  /** Field path of the offending input, for `invalid_event`. */
  path?: string;
  duplicate?: undefined;
  /** With `task_elsewhere`: the Host serving the Task (null while its lease is free) and the URL it advertises (null: none published). */
  host?: string | null;
  url?: string | null;
}

/**
 * What `send` answers, told apart by `kind`: `admitted`, `retained` with a rejection (written), a
 * `duplicate` of an event already stored, or `refused` (nothing written). `admitted`, `written`
 * and `duplicate` say the same facts as fields of their own (was it taken, was anything stored).
 * Built by the constructors below, so each kind carries exactly its fields.
 */
export type SendResult = SendAdmitted | SendRetained | SendDuplicate | SendRefused;

/** An appended event the Task took. */
export function sendAdmitted(at: SendAt): SendAdmitted {
  return { kind: 'admitted', admitted: true, written: true, revision: at.revision, state: at.state };
}

/** An appended event the statechart retained with `code` (and the rejection's detail, when it has one). */
export function sendRetained(
  at: SendAt,
  rejection: { reason: RejectionReason; detail?: string | undefined },
): SendRetained {
  return {
    kind: 'retained',
    admitted: false,
    written: true,
    revision: at.revision,
    state: at.state,
    code: rejection.reason,
    ...(rejection.detail ? { detail: rejection.detail } : {}),
  };
}

/** A retry answered with its first delivery's disposition, at that delivery's revision. */
export function sendDuplicate(
  disposition: { admitted: true } | { admitted: false; code: RejectionCode },
  at: SendAt,
): SendDuplicate {
  const result: SendDuplicate = {
    kind: 'duplicate',
    admitted: disposition.admitted,
    written: false,
    duplicate: true,
    revision: at.revision,
    state: at.state,
  };
  if (!disposition.admitted) result.code = disposition.code;
  return result;
}

/** An event refused before anything was written, with the field path of the offending input when there is one. */
export function sendRefused(
  refusal: { code: HostErrorCode; detail: string; path?: string | undefined },
  at: SendAt,
): SendRefused {
  const result: SendRefused = {
    kind: 'refused',
    admitted: false,
    written: false,
    code: refusal.code,
    detail: refusal.detail,
    revision: at.revision,
    state: at.state,
  };
  if (refusal.path !== undefined) result.path = refusal.path;
  return result;
}

/** `task_elsewhere`: another Host serves the Task (`host`, null while its lease is free) at `url` (null: none published); this Host holds no state of it. */
export function taskElsewhere(taskId: string, host: string | null, url: string | null): SendRefused {
  const detail = `task ${taskId} is served by ${host ?? 'no Host right now (its lease is free)'}${url ? ` at ${url}` : ''}; send it there`;
  return { ...sendRefused({ code: 'task_elsewhere', detail }, NOWHERE), host, url };
}

/** A refusal for a Task this Host holds no state of (`revision` 0, `state` `NO_STATE`). */
export function refusedNowhere(refusal: { code: HostErrorCode; detail: string }): SendRefused {
  return sendRefused(refusal, NOWHERE);
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

/** `send`'s answer for a Task the supervisor does not have (nothing written; `state` `NO_STATE`). */
export function taskNotFound(taskId: string): SendRefused {
  return refusedNowhere({ code: 'task_not_found', detail: `no task ${taskId}` });
}
