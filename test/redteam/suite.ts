import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { probeSandbox } from '../../os/index.js';
import { ordivon } from '../support/decision-requests.js';
import { optionalPart, type OptionalPart } from '../support/optional-part.js';
import type { AttackAgent } from './agents.js';
import { ATTACKS, type AttackCase } from './attacks.js';
import type { Programs } from './programs.js';
import { openRig, type AttackRun, type RedTeamRig } from './rig.js';

const probe = probeSandbox();
/** bubblewrap, as an optional part: without it there is no confinement to attack. */
const BWRAP = optionalPart('bubblewrap', probe.ok ? '/usr/bin/bwrap' : undefined, probe.ok ? '' : probe.detail);

type Settled = { ok: true; run: AttackRun } | { ok: false; error: unknown };

/**
 * The red-team suite of one driver (issue 43 item 6): one embedded Host, and each attack of
 * ATTACKS run as a Task of its own by that driver's real agent, `concurrency` Tasks at a time;
 * one test per attack asserts it was blocked and left nothing in the history.
 */
export function redTeamSuite(options: {
  driver: string;
  makeAgent: (programs: Programs) => AttackAgent;
  /** The agent binary (none for the command driver). */
  part?: OptionalPart;
  concurrency: number;
  /** Attacks only this driver's agent can make, after the twelve. */
  extra?: AttackCase[];
}): void {
  const attacks = [...ATTACKS, ...(options.extra ?? [])];
  const skip = BWRAP.skip || options.part?.skip || false;
  describe(`red team: every attack from an agent under the ${options.driver} driver is blocked`, { skip }, () => {
    let rig: RedTeamRig | undefined;
    const results = new Map<string, Promise<Settled>>();

    before(
      async () => {
        BWRAP.need();
        options.part?.need();
        const opened = await openRig(options.makeAgent, options.concurrency);
        rig = opened;
        // Every attack starts now; each test awaits its own. Settled, so none rejects unawaited.
        const queue = [...attacks];
        const slots = new Map<string, (s: Settled) => void>();
        for (const c of attacks) results.set(c.name, new Promise((resolve) => slots.set(c.name, resolve)));
        const worker = async (): Promise<void> => {
          for (let c = queue.shift(); c !== undefined; c = queue.shift()) {
            const settled = await opened.attack(c.name, c.attack, c.plan).then(
              (run): Settled => ({ ok: true, run }),
              (error: unknown): Settled => ({ ok: false, error }),
            );
            slots.get(c.name)!(settled);
          }
        };
        for (let i = 0; i < options.concurrency; i++) void worker();
      },
      { timeout: 120_000 },
    );
    after(async () => {
      await rig?.close();
    });

    for (const c of attacks)
      it(`${c.name}: ${c.title}`, { timeout: 600_000 }, async (t) => {
        const settled = await results.get(c.name)!;
        if (!settled.ok) throw settled.error;
        const receipt = settled.run.runJob?.harness?.receipt;
        t.diagnostic(`${c.name}: the agent's run took ${receipt?.timings.durationMs ?? '?'} ms`);
        t.diagnostic(`${c.name} observed: ${JSON.stringify(settled.run.observation)}`);
        await c.check(settled.run, rig!, t);
      });

    it(
      'after every attack: doctor --full proves every event and object of the state root',
      { timeout: 600_000 },
      async () => {
        await Promise.all(results.values());
        const doctor = await ordivon('doctor', '--full', '--state', rig!.state, '--json');
        assert.equal(doctor.status, 0, `${doctor.stdout}${doctor.stderr}`);
      },
    );
  });
}
