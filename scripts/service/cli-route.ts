import type { SendResult } from '../../actors/task-actor.js';
import { resolveStateRoot } from '../../store/index.js';
import { CliError, EXIT } from '../cli-io.js';
import { callService, type ServiceResponse } from './service-client.js';
import { runningService, type ServiceFile } from './service-file.js';

/** The running service that holds the state root, if any (`ordivon send/show/list` then talk to it). */
export function serviceFor(state: string | undefined): ServiceFile | null {
  return runningService(resolveStateRoot(state));
}

async function call(info: ServiceFile, method: string, path: string, body?: unknown): Promise<ServiceResponse> {
  try {
    return await callService(info, method, path, body);
  } catch (error) {
    throw new CliError('service_unreachable', `the service (pid ${info.pid}, ${info.socket ?? info.url}) holds the state root but does not answer: ${(error as Error).message}`);
  }
}

/** Turns an `{ error: { code, message } }` answer into the CliError the local command would raise. */
function refused(res: ServiceResponse): CliError {
  const error = (res.body as { error?: { code?: string; message?: string; path?: string } } | null)?.error;
  const code = error?.code ?? 'service_error';
  const usage = res.status === 400 || res.status === 413 || res.status === 415;
  return new CliError(code, error?.message ?? `HTTP ${res.status}`, usage ? EXIT.usage : EXIT.failed, error?.path ? { path: error.path } : {});
}

/** `send` through the service: the same `SendResult` the library returns. */
export async function sendViaService(info: ServiceFile, taskId: string, event: unknown, eventId?: string): Promise<SendResult> {
  const body = eventId && typeof event === 'object' && event !== null ? { ...event, eventId } : event;
  const res = await call(info, 'POST', `/tasks/${encodeURIComponent(taskId)}/events`, body);
  const result = res.body as SendResult & { error?: unknown };
  if (result === null || typeof result !== 'object' || result.error !== undefined || typeof result.admitted !== 'boolean') throw refused(res);
  const { taskId: _ignored, ...rest } = result as SendResult & { taskId?: string };
  return rest;
}

/** `show` through the service: the view `ordivon show --json` prints. */
export async function showViaService(info: ServiceFile, taskId: string, events: boolean): Promise<Record<string, unknown> & { title: string }> {
  const res = await call(info, 'GET', `/tasks/${encodeURIComponent(taskId)}${events ? '?events=1' : ''}`);
  if (res.status !== 200) throw refused(res);
  return res.body as Record<string, unknown> & { title: string };
}

/** `list` through the service: the rows `ordivon list --json` prints. */
export async function listViaService(info: ServiceFile): Promise<Array<{ taskId: string; state: string; revision: number; generation: number }>> {
  const res = await call(info, 'GET', '/tasks');
  if (res.status !== 200 || !Array.isArray(res.body)) throw refused(res);
  return (res.body as Array<{ taskId: string; state: string; revision: number; generation: number }>).map(({ taskId, state, revision, generation }) => ({ taskId, state, revision, generation }));
}
