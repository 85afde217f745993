import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { manualClock, type ManualClock } from '../../kernel/clock.js';
import { HostError } from '../../kernel/errors.js';
import type { FrontierRunner } from '../../kernel/frontier-runner.js';
import {
  FRONTIER_RETRY_ATTEMPTS,
  FRONTIER_RETRY_CAP_MS,
  FRONTIER_RETRY_MS,
  FrontierRetryPolicy,
  frontierRetryDelay,
} from '../../kernel/frontier-retry.js';
import { createSupervisor, type Supervisor } from '../../kernel/supervisor.js';
import type { Committed } from '../../kernel/send-result.js';
import type { FrontierWork } from '../../machines/index.js';
import { digestOf } from '../../store/index.js';
import { taskRequests } from '../../views/index.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

/** Entries as they come, and a promise for the first one (past or future) that matches. */
class Log<T> {
  readonly entries: T[] = [];
  private readonly waiting = new Set<{ match: (entry: T) => boolean; resolve: (entry: T) => void }>();

  push(entry: T): void {
    this.entries.push(entry);
    for (const w of [...this.waiting]) if (w.match(entry)) (this.waiting.delete(w), w.resolve(entry));
  }

  when(match: (entry: T) => boolean): Promise<T> {
    const seen = this.entries.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiting.add({ match, resolve }));
  }
}

/** A manual clock that logs the delay of each timer set on it (a retry armed is the event to wait on). */
function loggingClock(): ManualClock & { armed: Log<number> } {
  const base = manualClock();
  const armed = new Log<number>();
  return {
    armed,
    wall: () => base.wall(),
    mono: () => base.mono(),
    setTimer(ms, fire) {
      armed.push(ms);
      return base.setTimer(ms, fire);
    },
    advance: (ms, options) => base.advance(ms, options),
    get timers() {
      return base.timers;
    },
  };
}

/**
 * A frontier whose `compile_context` throws a coded error while `failing`, and otherwise compiles;
 * every other piece of work commits nothing. Counts each call and logs the steps reported.
 */
function failingFrontier() {
  const calls = new Log<FrontierWork>();
  const steps: string[] = [];
  const state = { failing: true };
  const runner: FrontierRunner = {
    async perform(handle, work) {
      calls.push(work);
      if (work !== 'compile_context') return;
      if (state.failing) throw new HostError('storage_failed', 'the context source is unreachable');
      const body = { taskId: handle.taskId, generation: 1, sources: [], prompt: 'generation 1' };
      await handle.send(
        { type: 'context.compile', generation: 1, contextDigest: digestOf({ kind: 'context', body }) },
        { objects: [{ kind: 'context', body }] },
      );
    },
    step: (_taskId, text) => void steps.push(text),
  };
  const compiles = () => calls.entries.filter((w) => w === 'compile_context').length;
  return { runner, calls, compiles, steps, state };
}

/** Every commit of a supervisor, from now on. */
function commitsOf(sup: Supervisor): Log<Committed> {
  const log = new Log<Committed>();
  sup.subscribe((c) => log.push(c));
  return log;
}

/** The microtasks queued by a commit or a failure (a kick, a retry armed) have run: time on the clock does not move. */
const drained = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The Task's DecisionRequests as `ordivon show` and `GET /tasks/:id/requests` read them. */
async function requestsOf(sup: Supervisor, taskId: string) {
  const reading = (await sup.readTask(taskId))!;
  return taskRequests(
    { events: reading.events, object: (digest) => reading.getObject(digest).body },
    reading.view.context.requests,
  );
}

const POLICY = { attempts: 3, backoffMs: 100, maxBackoffMs: 150 };

describe('frontier retry policy', () => {
  it('waits backoffMs · 2^(n−1) after the nth failure, at most maxBackoffMs; the defaults are 8 attempts, 250 ms, 30 s', () => {
    const defaults = FrontierRetryPolicy.parse({});
    assert.deepEqual(defaults, {
      attempts: FRONTIER_RETRY_ATTEMPTS,
      backoffMs: FRONTIER_RETRY_MS,
      maxBackoffMs: FRONTIER_RETRY_CAP_MS,
    });
    assert.deepEqual(defaults, { attempts: 8, backoffMs: 250, maxBackoffMs: 30_000 });
    assert.deepEqual(
      [1, 2, 3, 7, 8, 9, 5000].map((n) => frontierRetryDelay(defaults, n)),
      [250, 500, 1000, 16_000, 30_000, 30_000, 30_000],
    );
    assert.deepEqual(
      [1, 2, 3].map((n) => frontierRetryDelay(FrontierRetryPolicy.parse(POLICY), n)),
      [100, 150, 150],
    );
    assert.equal(frontierRetryDelay(FrontierRetryPolicy.parse({ backoffMs: 0 }), 5000), 0);
  });

  for (const [name, frontierRetry, path] of [
    ['no attempt at all', { attempts: 0 }, 'frontierRetry.attempts'],
    ['a negative backoff', { backoffMs: -1 }, 'frontierRetry.backoffMs'],
    ['a fractional cap', { maxBackoffMs: 1.5 }, 'frontierRetry.maxBackoffMs'],
    ['a misspelt key', { attemps: 3 }, 'frontierRetry.attemps'],
  ] as const) {
    it(`refuses ${name} as invalid_option naming ${path}, opening nothing`, () => {
      assert.throws(
        () => createSupervisor({ state: tempDir(), frontierRetry: frontierRetry as never }),
        (error: unknown) => error instanceof HostError && error.code === 'invalid_option' && error.path === path,
      );
    });
  }
});

describe('frontier work that always fails', () => {
  it('is tried `attempts` times on the backoff, then stops and asks an operator with its cause; not run again while pending, after a restart either; answered retry it runs again with a new count', async () => {
    const state = tempDir();
    const clock = loggingClock();
    const frontier = failingFrontier();
    const open = () => createSupervisor({ state, clock, frontier: frontier.runner, frontierRetry: POLICY });
    let sup = open();
    await sup.start();
    try {
      const commits = commitsOf(sup);
      const { taskId } = await sup.createTask(SPEC);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });

      // 1st failure: the retry waits backoffMs; the 2nd waits twice that, capped at maxBackoffMs.
      await clock.armed.when(() => clock.armed.entries.length === 1);
      assert.equal(frontier.compiles(), 1);
      clock.advance(99);
      assert.equal(frontier.compiles(), 1, 'not before the backoff');
      clock.advance(1);
      assert.equal(frontier.compiles(), 2);
      await clock.armed.when(() => clock.armed.entries.length === 2);
      clock.advance(149);
      assert.equal(frontier.compiles(), 2, 'not before the capped backoff');
      clock.advance(1);
      assert.equal(frontier.compiles(), 3);

      // The 3rd failure exhausts the policy: an operator's DecisionRequest, durable, and no timer.
      const opened = await commits.when((c) => c.type === 'request.open');
      const requestId = `${taskId}/frontier/compile_context/r${opened.revision - 1}`;
      await drained();
      assert.deepEqual(clock.armed.entries, [100, 150], 'no retry armed after the last attempt');
      assert.equal(clock.timers, 0);
      const [asked, ...others] = await requestsOf(sup, taskId);
      assert.equal(others.length, 0);
      assert.equal(asked!.requestId, requestId);
      assert.equal(asked!.status, 'pending');
      assert.equal(asked!.about, 'operator');
      assert.deepEqual(asked!.allowed, ['retry', 'cancel']);
      assert.match(asked!.evidence.join('\n'), /compile_context failed 3 times in a row/);
      assert.match(asked!.evidence.join('\n'), /storage_failed: the context source is unreachable/);
      assert.ok(frontier.steps.some((s) => /compile_context failed 3 times in a row .*asking an operator/.test(s)));
      assert.ok(frontier.steps.some((s) => s.includes(`decision request ${requestId} opened`)));
      assert.equal(sup.getTask(taskId)!.state, 'assigned.compiling', 'the Task stays at its frontier');

      // Pending: neither time nor another commit to the Task runs the work again.
      clock.advance(24 * 3_600_000);
      await sup.send(taskId, { type: 'goal.revise', goal: 'the same goal, said again' });
      await drained();
      assert.equal(frontier.compiles(), 3);

      // A restart reads the pending request from the Task: the work is not started at boot.
      await sup.stop();
      sup = open();
      await sup.start();
      await drained();
      assert.equal(frontier.compiles(), 3, 'not run at boot while the request is pending');
      clock.advance(24 * 3_600_000);
      assert.equal(frontier.compiles(), 3);
      assert.equal((await requestsOf(sup, taskId)).length, 1, 'asked once');

      // Answered retry: tried again at once, and a failure counts from one (the first backoff again).
      const answered = await sup.send(taskId, {
        type: 'request.answer',
        requestId,
        answer: 'retry',
        answeredBy: 'ops',
      });
      assert.equal(answered.admitted, true);
      await clock.armed.when(() => clock.armed.entries.length === 3);
      assert.equal(frontier.compiles(), 4);
      assert.equal(clock.armed.entries[2], 100);
      frontier.state.failing = false;
      clock.advance(100);
      assert.equal(await sup.waitFor(taskId, ['assigned.ready']), 'assigned.ready');
      assert.equal(frontier.compiles(), 5);
    } finally {
      await sup.stop();
    }
  });

  it('answered cancel, the Host cancels the Task, naming the request', async () => {
    const clock = loggingClock();
    const frontier = failingFrontier();
    const sup = createSupervisor({
      state: tempDir(),
      clock,
      frontier: frontier.runner,
      frontierRetry: { attempts: 1 },
    });
    await sup.start();
    try {
      const commits = commitsOf(sup);
      const { taskId } = await sup.createTask(SPEC);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
      const opened = await commits.when((c) => c.type === 'request.open');
      assert.equal(frontier.compiles(), 1, 'attempts 1: asked after the first failure, never retried');
      const requestId = `${taskId}/frontier/compile_context/r${opened.revision - 1}`;
      const answered = await sup.send(taskId, {
        type: 'request.answer',
        requestId,
        answer: 'cancel',
        answeredBy: 'ops',
      });
      assert.equal(answered.admitted, true);
      assert.equal(await sup.waitFor(taskId, ['cancelled'], []), 'cancelled');
      const cancel = sup.events(taskId).find((e) => e.type === 'task.cancel')!;
      assert.equal(cancel.origin, 'host');
      assert.equal(cancel.data['reason'], `an operator answered cancel to ${requestId}`);
      assert.equal(frontier.compiles(), 1);
      assert.equal(clock.timers, 0);
    } finally {
      await sup.stop();
    }
  });
});
