import type { z } from 'zod';
import { describeIssues } from '../../../base/index.js';
import { ProviderError } from './provider-error.js';
import { FaultState, RecordsAnswer, Target, type FaultRequest, type ProviderRecord } from './provider-schema.js';

/** One control call to a running provider; every answer is parsed. */
async function call<S extends z.ZodType>(
  url: string,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  schema: S,
  body?: unknown,
): Promise<z.output<S>> {
  let res: Response;
  try {
    res = await fetch(new URL(path, url), {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
  } catch (error) {
    throw new ProviderError('provider_unavailable', `${method} ${url}${path}: ${(error as Error).message}`);
  }
  const json: unknown = await res.json().catch(() => undefined);
  const parsed = schema.safeParse(json);
  if (res.ok && parsed.success) return parsed.data;
  const why = parsed.success ? `status ${res.status}` : `${res.status}: ${describeIssues(parsed.error)}`;
  throw new ProviderError('provider_answer_invalid', `${method} ${url}${path}: ${why} (${JSON.stringify(json)})`);
}

/** Sets fault switches of the running provider at `url` (`POST /_faults`); resolves with them as they stand. */
export function setProviderFaults(url: string, request: z.input<typeof FaultRequest>): Promise<FaultState> {
  return call(url, 'POST', '/_faults', FaultState, request);
}

/** Answers every response the `delay` switch holds now (`POST /_faults/release`). */
export function releaseHeld(url: string): Promise<FaultState> {
  return call(url, 'POST', '/_faults/release', FaultState);
}

/** Every perform, as the running server reports it (the file itself: `readProviderRecords`). */
export async function providerRecords(url: string): Promise<ProviderRecord[]> {
  return (await call(url, 'GET', '/_records', RecordsAnswer)).records;
}

/** Creates or replaces a target (`PUT /v1/targets/:name`, no `If-Match`). */
export function putTarget(url: string, name: string, content: unknown): Promise<Target> {
  return call(url, 'PUT', `/v1/targets/${encodeURIComponent(name)}`, Target, { content });
}
