import assert from 'node:assert/strict';
import type { ScriptedModel } from '../../workloads/scripted/responses-model.js';

/**
 * Asserts what a scripted model's `hang` step does with a request: answers 200 and holds the body
 * open until `model.close()` ends it.
 */
export async function assertHeldUntilClose(model: ScriptedModel, request: Promise<Response>): Promise<void> {
  const response = await request;
  assert.equal(response.status, 200);
  await model.waitForRequests(1);
  const body = response.text().then(
    () => 'ended',
    () => 'ended',
  );
  await model.close();
  assert.equal(await body, 'ended');
}
