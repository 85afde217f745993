// How peers.bench.ts drives each system of the side-by-side run: one driver program per peer
// (bench/peers/<peer>/driver.mjs, plain JavaScript run next to the peer's packages in
// .peers/<peer>/run/<peer>/, with bench/peers/shared/ copied beside it as .peers/<peer>/run/shared/),
// started as `node driver.mjs '<DriverConfig as JSON>'`. It writes one JSON object per line on
// stdout (DriverLine; anything else on stdout is a protocol error) and logs to stderr. The bench
// parses every line with these schemas.
//
// Modes:
// - `run`: start every Task of `tasks` (each `steps` steps: model call, then the tool the model
//   asks for, each durable before the next, as the peer makes a step durable), at most
//   `concurrency` in flight, and print `done` once every one has ended. Then stay up until stdin
//   closes (the bench may kill `pids.executor` or `pids.server` before that).
// - `resume`: the previous driver's executor was SIGKILLed; recover the same `dir` the way a user
//   of this peer recovers (whatever the peer does by itself, plus what its docs tell a user to do,
//   e.g. resume the threads a LangGraph checkpointer holds unfinished), print `ready`, then `done`
//   once every Task of `tasks` has ended.
// - `idle`: print `ready` with nothing started, then start every Task of `tasks` so that each
//   waits, held in the peer's own way (a message, an awakeable, an interrupt) that never comes,
//   print `idle` once all wait, and stay up until stdin closes. The bench reads the processes'
//   resident memory before and after.
// Stdin lines the bench may send: `{"t":"restart-server"}` (the peer's server was SIGKILLed: start
// it again on the same data, answer `server`).
// Every Task's tools run in `<dir>/work/<taskId>/`.
import { z } from 'zod';

export const Peer = z.enum(['restate', 'dbos', 'langgraph']);
export type Peer = z.infer<typeof Peer>;

export const DriverConfig = z.strictObject({
  mode: z.enum(['run', 'resume', 'idle']),
  /** The peer's own state folder (exists; kept across a kill and a resume). */
  dir: z.string().min(1),
  /** The stub model's base URL (`…/v1`; POST `${modelUrl}/chat/completions`). */
  modelUrl: z.string().url(),
  tasks: z.array(z.string().min(1)),
  steps: z.number().int().positive(),
  concurrency: z.number().int().positive(),
  /** Free loopback ports the driver may listen on (Restate's server and service). */
  ports: z.array(z.number().int().positive()),
  /** The PostgreSQL the bench started (DBOS): superuser URL; the driver makes its own database. */
  postgresUrl: z.string().optional(),
  /** LangGraph: `sync` (each checkpoint written before the next step) or its default `async`. */
  durability: z.enum(['sync', 'async']).optional(),
  /** LangGraph: set `PRAGMA synchronous=FULL` on the checkpointer's SQLite (fsync per commit). */
  syncFull: z.boolean().optional(),
});
export type DriverConfig = z.infer<typeof DriverConfig>;

export const DriverLine = z.discriminatedUnion('t', [
  z.strictObject({
    t: z.literal('ready'),
    /** `executor`: the process that runs the steps; `server`: the peer's server (Restate). */
    pids: z.strictObject({ executor: z.number().int(), server: z.number().int().optional() }),
    /** The peer's version(s), e.g. `restate-server 1.7.12, restate-sdk 1.17.2`. */
    version: z.string(),
    /** The durability setting in force, in words (what is synced when). */
    durability: z.string(),
  }),
  z.strictObject({ t: z.literal('done'), ended: z.number().int().nonnegative() }),
  z.strictObject({ t: z.literal('idle'), tasks: z.number().int().nonnegative() }),
  z.strictObject({ t: z.literal('server'), pid: z.number().int() }),
  z.strictObject({ t: z.literal('error'), message: z.string() }),
]);
export type DriverLine = z.infer<typeof DriverLine>;
