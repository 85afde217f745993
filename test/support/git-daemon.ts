import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { optionalPart, type OptionalPart } from './optional-part.js';
import { tempDir } from './temp.js';

/**
 * A real bare repository served by `git daemon` on loopback, for the git Effect adapter's tests.
 * Its `post-receive` hook (run by receive-pack after the refs are updated, before the pushing
 * client gets its answer) appends one line per updated ref to `pushes` and then waits while the
 * file `hold` exists: the count of pushes the remote took, and a held point between the update and
 * the answer.
 */

/** `git daemon`, an optional part: skipped (with the reason printed) when absent, failing under CI. */
export const GIT_DAEMON: OptionalPart = optionalPart(
  'git daemon',
  (() => {
    const r = spawnSync('git', ['--exec-path'], { encoding: 'utf8' });
    const path = r.status === 0 ? join(r.stdout.trim(), 'git-daemon') : undefined;
    return path !== undefined && existsSync(path) ? path : undefined;
  })(),
  'install git-daemon-run (Debian: apt-get install git-daemon-sysvinit, or a git built with git-daemon)',
);

export interface GitRemote {
  /** `git://127.0.0.1:<port>/pub.git` */
  url: string;
  /** The bare repository on disk. */
  dir: string;
  /** One line `<old> <new> <ref>` per ref update the remote took (its post-receive hook). */
  pushes(): string[];
  /** While held, the hook waits after the update: the pushing client gets no answer. */
  hold(): void;
  release(): void;
  /** The branch's head in the bare repository (read on disk), or null. */
  head(branch: string): string | null;
  /** Pushes `files` as a commit on `branch` from another clone (someone else's push); returns the commit. */
  pushAsOther(branch: string, files: Record<string, string>): string;
  stop(): Promise<void>;
}

/** git for the tests' own setup: no user config. */
export function gitSync(args: string[], cwd?: string): string {
  const home = tempDir('ordivon-git-home-');
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env['PATH'],
      HOME: home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      LC_ALL: 'C',
      GIT_AUTHOR_NAME: 'Someone Else',
      GIT_AUTHOR_EMAIL: 'else@example.invalid',
      GIT_COMMITTER_NAME: 'Someone Else',
      GIT_COMMITTER_EMAIL: 'else@example.invalid',
    },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** A free loopback port (bound and released; git daemon takes it next, retried if someone else did). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts git daemon serving a fresh bare repository `pub.git` with receive-pack enabled. */
export async function startGitRemote(): Promise<GitRemote> {
  const base = tempDir('ordivon-git-remote-');
  const dir = join(base, 'pub.git');
  gitSync(['init', '--bare', '-q', dir]);
  const pushes = join(base, 'pushes.log');
  const hold = join(base, 'hold');
  writeFileSync(pushes, '');
  const hook = join(dir, 'hooks', 'post-receive');
  writeFileSync(
    hook,
    `#!/bin/sh\nwhile read old new ref; do echo "$old $new $ref" >> '${pushes}'; done\nwhile [ -e '${hold}' ]; do sleep 0.05; done\n`,
  );
  chmodSync(hook, 0o755);
  let daemon: ChildProcess | undefined;
  let port = 0;
  for (let tries = 0; daemon === undefined; tries++) {
    port = await freePort();
    const child = spawn(
      'git',
      [
        'daemon',
        '--export-all',
        '--enable=receive-pack',
        '--reuseaddr',
        '--verbose',
        '--informative-errors',
        `--base-path=${base}`,
        '--listen=127.0.0.1',
        `--port=${port}`,
        base,
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { PATH: process.env['PATH'], HOME: base, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      },
    );
    const ready = await new Promise<boolean>((resolve) => {
      let text = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('Ready to rumble')) resolve(true);
      });
      child.once('exit', () => resolve(false));
    });
    if (ready) daemon = child;
    else if (tries >= 5) throw new Error(`git daemon did not start on 127.0.0.1:${port}`);
  }
  const running = daemon;
  const remote: GitRemote = {
    url: `git://127.0.0.1:${port}/pub.git`,
    dir,
    pushes: () =>
      readFileSync(pushes, 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    hold: () => writeFileSync(hold, ''),
    release: () => rmSync(hold, { force: true }),
    head(branch) {
      const r = spawnSync('git', ['--git-dir', dir, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], {
        encoding: 'utf8',
      });
      return r.status === 0 ? r.stdout.trim() : null;
    },
    pushAsOther(branch, files) {
      const clone = join(tempDir('ordivon-git-other-'), 'clone');
      gitSync(['init', '-q', clone]);
      const head = remote.head(branch);
      if (head !== null) {
        gitSync(['fetch', '-q', dir, `refs/heads/${branch}`], clone);
        gitSync(['checkout', '-q', 'FETCH_HEAD'], clone);
      }
      for (const [name, text] of Object.entries(files)) writeFileSync(join(clone, name), text);
      gitSync(['add', '-A'], clone);
      gitSync(['commit', '-q', '-m', `someone else's change on ${branch}`], clone);
      gitSync(['push', '-q', `git://127.0.0.1:${port}/pub.git`, `HEAD:refs/heads/${branch}`], clone);
      return gitSync(['rev-parse', 'HEAD'], clone).trim();
    },
    stop: () =>
      new Promise<void>((resolve) => {
        rmSync(hold, { force: true });
        if (running.exitCode !== null || running.signalCode !== null) return resolve();
        running.once('exit', () => resolve());
        running.kill('SIGTERM');
      }),
  };
  return remote;
}
