import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative, sep } from 'node:path';

/**
 * Resource limits of one confined process tree, set with `prlimit` inside the sandbox before the
 * command starts (they are inherited by everything it spawns).
 */
export interface SandboxLimits {
  /** RLIMIT_DATA: heap and private writable mappings (reserved address space is not counted). */
  memoryBytes: number;
  /** RLIMIT_NPROC: processes of the sandbox's uid. */
  processes: number;
  /** RLIMIT_FSIZE: the largest file it may write. */
  fileSizeBytes: number;
  /** RLIMIT_NOFILE: open file descriptors per process. */
  openFiles: number;
}

/**
 * Where one confined process may go, as plain data (it crosses into the driver pool's workers).
 * The workspace is the only writable path besides a private `/tmp` and `writable`; system
 * directories and `readable` are read-only; nothing else of the machine is mounted.
 */
export interface Sandbox {
  /** The Task Attempt's workspace: mounted read-write at its own path, and the working directory. */
  workspace: string;
  /** `none`: a network namespace of its own (its own loopback only); `host`: the machine's network. */
  network: 'host' | 'none';
  /** Extra paths mounted read-only at their own path. */
  readable: readonly string[];
  /** Extra paths mounted read-write at their own path. */
  writable: readonly string[];
  /**
   * Paths that are never mounted, whatever else says so (the state root): a readable or writable
   * path inside or around one is refused, a command file inside one is not made visible.
   */
  hidden: readonly string[];
  limits: SandboxLimits;
  /**
   * The uid and gid the command runs as. Given when the Host runs as root: bwrap then makes no
   * user namespace (in one, root would still own root's files), and drops to this account inside.
   */
  user?: { uid: number; gid: number };
  /**
   * The Runtime job the process runs for, written on bwrap's command line (`jobMarker`) so that a
   * recovery finds the sandbox by it (`jobSandboxes`) when the Host died before recording its pid.
   */
  jobId?: string;
}

/** What a spawn runs instead of the command: bwrap, its arguments, then the command. */
export interface SandboxedCommand {
  command: string;
  args: string[];
}

/** Why a sandbox could not be built for this spawn (a configured path that would reveal a hidden one). */
export class SandboxRefused extends Error {
  readonly code = 'confinement_path_refused';
}

/**
 * A command that cannot be run inside its sandbox: not on the sandbox's PATH, or not visible
 * there. Thrown before anything starts, as a failed spawn (bwrap would start and then fail to exec).
 */
export class SandboxCommandMissing extends Error {
  readonly code = 'command_not_found';
}

/** Read-only system directories, mounted where they exist (as the symlink they are, where they are one). */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt', '/etc'];

/** Files and folders of `/etc` that hold secrets: each is covered by an empty one inside. */
const ETC_SECRET_FILES = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/security/opasswd'];
const ETC_SECRET_DIRS = ['/etc/ssh', '/etc/ssl/private', '/etc/sudoers.d'];

const BWRAP = '/usr/bin/bwrap';
const BASH = '/bin/bash';

/**
 * Closes every descriptor above 3 (`SANDBOX_INFO_FD`) the spawn inherited, then execs the rest of the line. Node's own
 * descriptors are close-on-exec, but a native library's need not be (LMDB's data files are opened
 * without it): bubblewrap passes whatever it inherits into the sandbox, where a process holding a
 * read-write descriptor of the journal needs no path to it. bash, because it closes descriptors
 * above 9 (`exec 22>&-`), which a POSIX sh need not.
 */
const CLOSE_INHERITED =
  'for f in /proc/self/fd/*; do n=${f##*/}; if [ "$n" -gt 3 ]; then eval "exec $n>&-" 2>/dev/null; fi; done; exec "$@"';

/**
 * The descriptor on which bwrap reports the sandbox it made (`--info-fd`: the pid of its first
 * process inside), which the spawn must open; the wrapper above keeps it. bwrap closes it in the
 * sandbox, so no confined process holds it.
 */
export const SANDBOX_INFO_FD = 3;
const PRLIMIT = '/usr/bin/prlimit';
const SETPRIV = '/usr/bin/setpriv';

function within(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
}

function overlaps(a: string, b: string): boolean {
  return within(a, b) || within(b, a);
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The bwrap command line that runs `command` inside `sandbox`. The command runs in new mount, pid,
 * ipc, uts and cgroup namespaces (and a network one under `none`), as the leader of a new session,
 * with no new privileges and no capabilities; it dies with its parent, and when it exits every
 * process it started dies with its pid namespace.
 *
 * The command itself and every argument that is an absolute path to an existing file are mounted
 * read-only (just that file) unless they lie in a hidden path: a program one names can be run.
 *
 * The spawn must open `SANDBOX_INFO_FD` (a pipe: bwrap writes its report there; closed, bwrap fails).
 *
 * Throws `SandboxRefused` when a readable or writable path is inside, or contains, a hidden path.
 */
export function sandboxCommand(
  sandbox: Sandbox,
  command: string,
  args: readonly string[],
  path?: string,
): SandboxedCommand {
  const hidden = sandbox.hidden.flatMap((p) => [p, real(p)]);
  refuseHiddenOverlaps(sandbox, hidden);
  const bw = [
    ...isolationFlags(sandbox),
    ...systemMounts(),
    ...commandAndWorkspaceMounts(sandbox, hidden, { command, args, path }),
  ];
  return {
    command: BASH,
    // --norc: bash reads ~/.bashrc when its stdin is a socket (it takes itself for rshd's), and
    // Node's pipes are socket pairs; --posix: nor BASH_ENV.
    args: [
      '--norc',
      '--noprofile',
      '--posix',
      '-c',
      CLOSE_INHERITED,
      'ordivon-sandbox',
      BWRAP,
      ...bw,
      '--',
      ...limitsAndAccount(sandbox),
      command,
      ...args,
    ],
  };
}

/** Throws `SandboxRefused` when a readable or writable path is inside, or contains, a hidden path. */
function refuseHiddenOverlaps(sandbox: Sandbox, hidden: readonly string[]): void {
  for (const [kind, paths] of [
    ['readable', sandbox.readable],
    ['writable', sandbox.writable],
  ] as const)
    for (const path of paths) {
      const clash = hidden.find((h) => overlaps(h, path) || overlaps(h, real(path)));
      if (clash !== undefined)
        throw new SandboxRefused(`${kind} path ${path} overlaps ${clash}, which a confined process never sees`);
    }
}

/**
 * The argument a job's sandbox carries on bwrap's command line (after `--unsetenv`, where it is a
 * no-op): `ORDIVON_JOB_` and the job id, which is letters, digits and underscores.
 */
export function jobMarker(jobId: string): string {
  return `${MARKER_PREFIX}${jobId.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

export const MARKER_PREFIX = 'ORDIVON_JOB_';

/** bwrap's namespaces, capabilities, session and hostname. */
function isolationFlags(sandbox: Sandbox): string[] {
  const bw: string[] = ['--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try'];
  if (sandbox.network === 'none') bw.push('--unshare-net');
  if (sandbox.user === undefined) bw.push('--unshare-user', '--cap-drop', 'ALL');
  // As root, bwrap keeps what setpriv needs to drop to the sandbox's account, and setpriv drops it.
  else bw.push('--cap-drop', 'ALL', '--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP');
  bw.push('--die-with-parent', '--new-session', '--hostname', 'ordivon-sandbox', '--info-fd', String(SANDBOX_INFO_FD));
  // Unsetting a variable that is never set changes nothing inside; outside, it names the job.
  if (sandbox.jobId !== undefined) bw.push('--unsetenv', jobMarker(sandbox.jobId));
  return bw;
}

/** The system folders read-only, /etc's secrets masked, fresh /proc, /dev, /run and temporary folders. */
function systemMounts(): string[] {
  const bw: string[] = [];
  for (const path of SYSTEM_PATHS) {
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) bw.push('--symlink', readlinkSync(path), path);
    else if (stat.isDirectory()) bw.push('--ro-bind', path, path);
  }
  for (const path of ETC_SECRET_FILES) if (existsSync(path)) bw.push('--ro-bind', '/dev/null', path);
  for (const path of ETC_SECRET_DIRS) if (existsSync(path)) bw.push('--tmpfs', path);
  bw.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/run');
  for (const path of ['/tmp', '/var/tmp']) bw.push('--perms', '1777', '--tmpfs', path);
  return bw;
}

/**
 * The files the command line names, the readable and writable paths and the workspace (the
 * working directory); checks the command can be run from what the sandbox shows.
 */
function commandAndWorkspaceMounts(
  sandbox: Sandbox,
  hidden: readonly string[],
  { command, args, path }: { command: string; args: readonly string[]; path: string | undefined },
): string[] {
  const bw: string[] = [];
  const mounted = SYSTEM_PATHS.filter((p) => p !== '/etc');
  const visible = (path: string): boolean =>
    !hidden.some((h) => within(h, path) || within(h, real(path))) && !mounted.some((m) => within(m, path));
  const named = [command, ...args].filter((a) => isAbsolute(a) && isFile(a) && visible(a));
  // bwrap makes the missing parents of a mount point 0700, which an unprivileged account cannot enter.
  const binds = [...new Set(named), ...sandbox.readable, ...sandbox.writable, sandbox.workspace];
  for (const dir of parentsOf(binds, mounted)) bw.push('--perms', '0755', '--dir', dir);
  for (const path of new Set(named)) bw.push('--ro-bind', path, path);
  const seen = [...mounted, ...sandbox.readable, ...sandbox.writable, sandbox.workspace];
  const inSandbox = (file: string): boolean =>
    (named.includes(file) || seen.some((m) => within(m, file))) && !hidden.some((h) => within(h, file));
  assertRunnable(command, path, sandbox.workspace, inSandbox);
  // A configured path that does not exist (yet) is skipped, not an error: a cache folder, say.
  for (const path of sandbox.readable) bw.push('--ro-bind-try', path, path);
  for (const path of sandbox.writable) bw.push('--bind-try', path, path);
  bw.push('--bind', sandbox.workspace, sandbox.workspace, '--chdir', sandbox.workspace);
  return bw;
}

/** prlimit's resource limits, then setpriv's drop to the sandbox's account when it names one. */
function limitsAndAccount(sandbox: Sandbox): string[] {
  const { limits } = sandbox;
  const inner = [
    PRLIMIT,
    `--data=${limits.memoryBytes}`,
    `--nproc=${limits.processes}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--nofile=${limits.openFiles}`,
    '--',
  ];
  if (sandbox.user !== undefined)
    inner.push(
      SETPRIV,
      `--reuid=${sandbox.user.uid}`,
      `--regid=${sandbox.user.gid}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--',
    );
  return inner;
}

/** Every ancestor of `paths` outside the mounted system folders, parents first. */
function parentsOf(paths: readonly string[], mounted: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const path of paths) {
    const parts = path.split('/').filter((p) => p !== '');
    for (let i = 1; i < parts.length; i++) {
      const dir = '/' + parts.slice(0, i).join('/');
      if (!mounted.some((m) => within(m, dir)) && !['/tmp', '/var/tmp', '/var'].includes(dir)) dirs.add(dir);
    }
  }
  return [...dirs].sort((a, b) => a.split('/').length - b.split('/').length);
}

/** Throws `SandboxCommandMissing` unless `command` names an executable file the sandbox shows. */
function assertRunnable(
  command: string,
  path: string | undefined,
  cwd: string,
  inSandbox: (file: string) => boolean,
): void {
  const executable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes('/')) {
    const file = isAbsolute(command) ? command : join(cwd, command);
    if (!executable(file)) throw new SandboxCommandMissing(`${command}: no such executable file`);
    if (!inSandbox(file))
      throw new SandboxCommandMissing(`${command} is not visible inside the sandbox: add its directory to readable`);
    return;
  }
  const dirs = (path ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter).filter((d) => isAbsolute(d));
  if (dirs.some((dir) => executable(join(dir, command)) && inSandbox(join(dir, command)))) return;
  throw new SandboxCommandMissing(
    `${command}: not found on the sandbox's PATH (${dirs.join(delimiter)}); directories outside the system ones must be readable`,
  );
}

/** Whether confinement can be had here, and if not, what is missing and how to get it. */
export type SandboxProbe = { ok: true } | { ok: false; missing: string; detail: string };

let probed: SandboxProbe | undefined;

/**
 * Checks once per process that a confined process can be started here: Linux, bwrap, prlimit and
 * (as root) setpriv installed, and a trivial sandbox actually runs (user namespaces can be
 * disabled, or refused by a security module, while bwrap is installed).
 */
export function probeSandbox(): SandboxProbe {
  if (probed !== undefined) return probed;
  probed = probeNow();
  return probed;
}

function probeNow(): SandboxProbe {
  const install = 'install it with `apt-get install bubblewrap util-linux` (Debian, Ubuntu)';
  if (process.platform !== 'linux')
    return {
      ok: false,
      missing: 'linux',
      detail: `confinement needs Linux namespaces (bubblewrap); on ${process.platform} there is none to be had. Run the Host on Linux, or set "confinement": "none" to run agents unconfined`,
    };
  const root = process.getuid?.() === 0;
  for (const [path, name] of [
    [BASH, 'bash'],
    [BWRAP, 'bwrap'],
    [PRLIMIT, 'prlimit'],
    ...(root ? [[SETPRIV, 'setpriv']] : []),
  ] as const)
    if (!existsSync(path))
      return { ok: false, missing: name, detail: `${path} is not installed: ${install}, or set "confinement": "none"` };
  const workspace = realpathSync('/tmp');
  const trial = sandboxCommand(
    {
      workspace,
      network: 'none',
      readable: [],
      writable: [],
      hidden: [],
      limits: DEFAULT_SANDBOX_LIMITS,
      ...(root ? { user: NOBODY } : {}),
    },
    '/bin/true',
    [],
  );
  const ran = spawnSync(trial.command, trial.args, {
    encoding: 'utf8',
    timeout: 10_000,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  if (ran.status === 0) return { ok: true };
  const why = (ran.stderr || ran.error?.message || `exit ${ran.status}`).trim();
  return {
    ok: false,
    missing: 'namespaces',
    detail: `bwrap could not start a sandbox here (${why}): unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap on Ubuntu 24.04), or set "confinement": "none"`,
  };
}

/** The account a confined process runs as when the Host is root: Debian's `nobody` / `nogroup`. */
export const NOBODY = { uid: 65534, gid: 65534 } as const;

/** Limits when the configuration names none. */
export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  memoryBytes: 8 * 1024 ** 3,
  processes: 4096,
  fileSizeBytes: 1024 ** 3,
  openFiles: 4096,
};
