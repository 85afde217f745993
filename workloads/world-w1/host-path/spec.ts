import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HarnessConfig } from '../../../frontier/index.js';
import type { TaskSpecInput } from '../../../objects/index.js';

/**
 * The Host path (variant d) of World W1 as a user writes it: a Task whose one decision stage
 * performs an operation as an External Effect, a provider operation through the adapter
 * registered as `provider` or the web app's order form through the one registered as `shop`. The
 * trusted policy in the world supports the candidate, so admission turns on the Effect and its
 * observations alone. The stage does not propose completion: once the Effect is recorded, refused
 * or put to an operator the Task rests.
 */

/** The world of the Task (source tree: the policy is a file of the package, not of dist/). */
export const W1_WORLD = fileURLToPath(new URL('../../../../workloads/world-w1/world/', import.meta.url));

/** What a trajectory's Effect is: the operation, its target, and the reference the records count by. */
export interface W1Effect {
  operation: string;
  target: string;
  reference: string;
}

/** The candidate action performing `effect` through the adapter registered as `provider`. */
export function providerAction(effect: W1Effect, reconcile: 'host' | 'decision') {
  return {
    kind: 'effect',
    adapter: 'provider',
    operation: effect.operation,
    target: effect.target,
    input: { reference: effect.reference, amount: 1 },
    reconcile,
  } as const;
}

/** The input of the web app's order: one item, and the reference that makes its digest the trajectory's own. */
export function webappInput(reference: string) {
  return { quantity: 1, reference };
}

/** The web app's Effect: an order of one widget, its form submitted through the adapter registered as `shop`. */
export function webappEffect(reference: string): W1Effect {
  return { operation: 'order', target: 'widget', reference };
}

/** The candidate action ordering through the web app's form (the adapter registered as `shop`), reconciled by the Host. */
export function webappAction(effect: W1Effect) {
  return {
    kind: 'effect',
    adapter: 'shop',
    operation: effect.operation,
    target: effect.target,
    input: webappInput(effect.reference),
    reconcile: 'host',
  } as const;
}

type Action = ReturnType<typeof providerAction> | ReturnType<typeof webappAction>;

/**
 * The Task: one decision stage whose one candidate is `action` (default: the provider operation),
 * performed through `via` (`the provider`, `the web app`).
 */
export function hostPathSpec(
  effect: W1Effect,
  label: string,
  how: { action: Action; via: string } = { action: providerAction(effect, 'host'), via: 'the provider' },
): TaskSpecInput {
  return {
    title: `Perform ${effect.operation} on ${effect.target} once (${label})`,
    goal: `Perform ${effect.operation} on ${effect.target} through ${how.via} exactly once.`,
    world: W1_WORLD,
    sources: [{ id: 'policy', path: 'POLICY.md', in: 'world', trust: 'trusted', description: 'what may be performed' }],
    requiredArtifacts: [{ name: 'choice.json', kind: 'json', schema: 'decision' }],
    stages: [
      {
        name: 'act',
        instructions: `Choose the candidate and write choice.json; the Host performs it through ${how.via}.`,
        produces: ['choice.json'],
        decision: {
          artifact: 'choice.json',
          candidates: [
            {
              id: 'perform',
              summary: `${effect.operation} ${effect.target} through ${how.via}`,
              supportedBy: ['policy'],
              action: how.action,
            },
          ],
        },
      },
    ],
    labels: { workload: 'world-w1', trajectory: label },
  };
}

/**
 * The agent: a child process behind the `command` driver that chooses `perform` in the Context
 * its prompt shows. With a fault given, the first run (no marker file yet) POSTs it (JSON) to
 * `faultsUrl` before choosing (the provider's `/_faults`, a web app control route): the world
 * moves while the agent works, between the Context it was shown and the Host's perform.
 */
const AGENT = `
const fs = require('fs');
let prompt = '';
process.stdin.on('data', (c) => (prompt += c)).on('end', async () => {
  const [faultUrl, faultJson, marker] = process.argv.slice(1);
  const shown = /Context digest: (sha256:[0-9a-f]{64})/.exec(prompt)[1];
  if (faultJson && !fs.existsSync(marker)) {
    fs.writeFileSync(marker, faultJson);
    const res = await fetch(faultUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: faultJson });
    if (!res.ok) { console.error('fault not set: ' + res.status + ' ' + (await res.text())); process.exit(3); }
  }
  fs.writeFileSync('choice.json', JSON.stringify({ contextDigest: shown, candidateId: 'perform', rationale: 'the policy names it' }));
});`;

/** The harness `agent`, optionally moving the world (`fault`, the body POSTed to `faultsUrl`) on its first run only. */
export function hostPathHarness(options: { faultsUrl?: string; fault?: unknown; marker?: string } = {}): HarnessConfig {
  const fault = options.fault === undefined ? '' : JSON.stringify(options.fault);
  return {
    driver: 'command',
    command: process.execPath,
    args: ['-e', AGENT, options.faultsUrl ?? '', fault, options.marker ?? ''],
    // The agent runs confined: its marker's folder is the one place outside its workspace it writes.
    ...(options.marker !== undefined ? { writable: [dirname(options.marker)] } : {}),
    timeoutMs: 30_000,
  };
}
