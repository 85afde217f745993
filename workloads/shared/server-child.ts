import { createInterface } from 'node:readline';
import { execa, type ResultPromise } from 'execa';
import type { z } from 'zod';

/** How a server process ended. `signal: 'SIGKILL'` with no stop asked for: it killed itself. */
export interface ServerExit {
  exitCode: number | undefined;
  signal: string | undefined;
}

/** A frozen world's server process, once it printed the line that says where it listens. */
export interface ServerChild<T> {
  /** Its first stdout line, parsed. */
  line: T;
  pid: number;
  /** Settles when the process ends, for whatever reason (never rejects). */
  exited: Promise<ServerExit>;
  kill(signal: 'SIGTERM' | 'SIGKILL'): void;
}

/** The subprocess's first stdout line, or `undefined` if stdout closes without one. */
function firstLine(sub: ResultPromise): Promise<string | undefined> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: sub.stdout! });
    lines.once('line', resolve);
    lines.once('close', () => resolve(undefined));
  });
}

/**
 * Starts `node <args>` (a world's `server.js` and its flags) and resolves once its first stdout
 * line parses as `schema`. Otherwise the child is killed and `startFailed(why)` is thrown, `why`
 * naming what it printed and its stderr. stdout is read here line by line (not buffered by execa);
 * the child is killed if this process exits (execa's `cleanup`), so a test that fails midway
 * leaves no server behind.
 */
export async function spawnServerChild<S extends z.ZodType>(
  args: readonly string[],
  schema: S,
  startFailed: (why: string) => Error,
): Promise<ServerChild<z.output<S>>> {
  const sub = execa(process.execPath, [...args], { reject: false, stdin: 'ignore', buffer: { stdout: false } });
  const exited: Promise<ServerExit> = sub.then((r) => ({ exitCode: r.exitCode, signal: r.signal }));
  const line = await firstLine(sub);
  const fail = async (why: string): Promise<never> => {
    sub.kill('SIGKILL');
    const result = await sub;
    throw startFailed(`${why}; stderr: ${String(result.stderr)}`);
  };
  if (line === undefined) return fail('exited before it printed where it listens');
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return fail(`printed ${JSON.stringify(line)}, not JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return fail(`printed ${line}, not the line it should`);
  if (sub.pid === undefined) return fail('no pid');
  return { line: parsed.data, pid: sub.pid, exited, kill: (signal) => void sub.kill(signal) };
}
