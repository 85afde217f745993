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
  state: string;
}

// Each kind declares the fields it never carries as `?: undefined`, so each stays readable on the union.

/** The event was appended and the Task took it. */
export interface SendAdmitted extends SendAt {
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
 * What `send` answers: admitted, retained with a rejection (written), a duplicate of an event
 * already stored, or refused (nothing written); told apart by `written` and `duplicate`. Built by
 * the constructors below, so each kind carries exactly its fields.
 */
export type SendResult = SendAdmitted | SendRetained | SendDuplicate | SendRefused;

/** An appended event the Task took. */
export function sendAdmitted(at: SendAt): SendAdmitted {
  return { admitted: true, written: true, revision: at.revision, state: at.state };
}

/** An appended event the statechart retained with `code` (and the rejection's detail, when it has one). */
export function sendRetained(
  at: SendAt,
  rejection: { reason: RejectionReason; detail?: string | undefined },
): SendRetained {
  return {
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

/** `task_elsewhere`: another Host serves the Task (`host`, null while its lease is free) at `url` (null: none published). */
export function taskElsewhere(taskId: string, host: string | null, url: string | null): SendRefused {
  return {
    admitted: false,
    written: false,
    code: 'task_elsewhere',
    detail: `task ${taskId} is served by ${host ?? 'no Host right now (its lease is free)'}${url ? ` at ${url}` : ''}; send it there`,
    host,
    url,
    revision: 0,
    state: 'unknown',
  };
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
export function taskNotFound(taskId: string): SendRefused {
  return sendRefused({ code: 'task_not_found', detail: `no task ${taskId}` }, { revision: 0, state: 'none' });
}
