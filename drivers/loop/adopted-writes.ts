import { lstatSync, utimesSync } from 'node:fs';
import { resolveInside } from '../confine.js';
import type { LogRecord } from './step-log.js';

/** The tools whose successful call leaves a file the stage may deliver. */
const WRITING_TOOLS = new Set(['write_file', 'edit_file']);

/**
 * Renews the modification time of each file the adopted part of the conversation wrote (a
 * `write_file` or `edit_file` an older generation ran), where it is still a regular file inside
 * the workspace. The Host takes as a run's artifacts only the files the Runtime saw change during
 * that run; a file written before the kill is this conversation's work all the same, and without
 * this the stage would be refused for an artifact its own conversation delivered. The bytes are not
 * touched: the Host still checks them against their contracts. Returns the paths renewed.
 */
export function renewAdoptedWrites(records: readonly LogRecord[], workspace: string, now = new Date()): string[] {
  const start = records[0];
  const adopted = start?.t === 'start' ? (start.adopted?.records ?? 0) : 0;
  const steps = records.slice(1, 1 + adopted);
  const paths = new Map<string, string>();
  for (const r of steps) {
    if (r.t !== 'tool_intent' || !WRITING_TOOLS.has(r.call.name)) continue;
    try {
      const path = (JSON.parse(r.call.arguments) as { path?: unknown }).path;
      if (typeof path === 'string') paths.set(r.call.id, path);
    } catch {
      // Arguments that were not JSON: the call was refused, and wrote nothing.
    }
  }
  const renewed: string[] = [];
  for (const r of steps) {
    if (r.t !== 'tool_result' || !r.outcome.ok) continue;
    const path = paths.get(r.callId);
    if (path === undefined || renewed.includes(path)) continue;
    const target = resolveInside(workspace, path);
    if (!target.ok) continue;
    try {
      if (!lstatSync(target.value).isFile()) continue;
      utimesSync(target.value, now, now);
      renewed.push(path);
    } catch {
      // Gone since: nothing to deliver.
    }
  }
  return renewed;
}
