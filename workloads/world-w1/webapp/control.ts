import { type z } from 'zod';
import { describeIssues } from '../../../base/index.js';
import { WEBAPP_CODES, WebappError, type WebappCode } from './webapp-error.js';
import {
  ErrorAnswer,
  FaultState,
  IdentityState,
  Item,
  OrdersAnswer,
  type FaultRequest,
  type Order,
} from './webapp-schema.js';

/**
 * One JSON call to a control route, parsed. Control calls change only the process's switches or
 * an item (never an order), so any failure may be retried.
 */
async function control<S extends z.ZodType>(
  url: string,
  method: 'GET' | 'POST',
  path: string,
  schema: S,
  body?: unknown,
) {
  let res: Response;
  try {
    res = await fetch(new URL(path, url), {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new WebappError('webapp_unavailable', `${method} ${url}${path}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = await res.json();
  } catch {
    raw = undefined;
  }
  if (res.status !== 200) {
    const refusal = ErrorAnswer.safeParse(raw);
    if (refusal.success && refusal.data.code in WEBAPP_CODES)
      throw new WebappError(refusal.data.code as WebappCode, refusal.data.message, { path: refusal.data.path });
  }
  const parsed = schema.safeParse(raw);
  if (res.status === 200 && parsed.success) return parsed.data as z.output<S>;
  const why = parsed.success ? `status ${res.status}` : describeIssues(parsed.error);
  throw new WebappError('webapp_answer_invalid', `${method} ${url}${path}: the answer does not parse (${why})`);
}

/** Sets the running server's fault switch (`POST /control/faults`). */
export function setWebappFault(url: string, request: FaultRequest): Promise<FaultState> {
  return control(url, 'POST', '/control/faults', FaultState, request);
}

/** Changes the identity every page of the running server states (`POST /control/identity`). */
export async function setWebappIdentity(url: string, identity: string): Promise<string> {
  return (await control(url, 'POST', '/control/identity', IdentityState, { identity })).identity;
}

/** Moves an item's version (`POST /control/items/:name/change`): the "target changed since observed" fault. */
export function changeWebappItem(url: string, name: string): Promise<Item> {
  return control(url, 'POST', `/control/items/${encodeURIComponent(name)}/change`, Item);
}

/** Every order, as the running server reports it (`GET /control/orders`; the file itself: `readWebappFile`). */
export async function webappOrders(url: string): Promise<Order[]> {
  return (await control(url, 'GET', '/control/orders', OrdersAnswer)).orders;
}

/** Undoes what a trajectory left: the fault switch off, `identity` stated again. */
export async function resetWebapp(url: string, identity: string): Promise<void> {
  await setWebappFault(url, { mode: 'none' });
  await setWebappIdentity(url, identity);
}
