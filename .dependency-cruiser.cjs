/**
 * The import rules `npm run lint` holds the tree to (dependency-cruiser, `npm run lint:imports`);
 * test/lint-imports.test.ts plants a violation of each and expects the lint to fail on it.
 *
 * - no-circular: no cycle between files, type-only imports included.
 * - folder-*: which of the project's folders each product folder may import. Dependencies point
 *   one way: the Host's composition root (`host/`) on everything below it; the frontier and the
 *   views on the kernel; the kernel on recovery, its object schemas, its statechart, the store,
 *   the drivers' receipt and confinement and the read sets (`readsets/`, which read a Task's
 *   sources through the Runtime's workspace naming); recovery on the object schemas, the
 *   statechart and the store, never on the Host that runs it; the object schemas on the
 *   statechart, the store's record schemas and the drivers' receipt; the Runtime on the drivers
 *   it runs and the store; the store and the drivers only on `os/` and `base/`; `base/`, `os/` and
 *   `machines/` on no other folder.
 * - cli-no-lab: the CLI and the service (`cli/`) import nothing of the lab (`workloads/`,
 *   `bench/`): the lab registers with the CLI (cli/extensions.ts), and dev tooling (`tools/`)
 *   is no part of the product.
 * - through-door: an import from one product folder into another goes through a door of that
 *   folder: an `index.ts` (its own or a sub-folder's, e.g. `store/postgres/index.ts`, which keeps
 *   `pg` out of the embedded store), or one of the light modules in LIGHT_DOORS.
 */

/** What the kernel stands on; the frontier and the Host's composition root stand on it too. */
const BELOW_KERNEL = ['readsets', 'recovery', 'objects', 'machines', 'store', 'drivers', 'os', 'base'];

/** Product folders and the project folders each may import. */
const ALLOWED = {
  base: [],
  os: [],
  machines: [],
  store: ['os', 'base'],
  drivers: ['os', 'base'],
  runtime: ['drivers', 'store', 'os', 'base'],
  objects: ['machines', 'store', 'drivers', 'base'],
  recovery: ['objects', 'machines', 'store', 'base'],
  readsets: ['runtime', 'objects', 'machines', 'store', 'base'],
  kernel: BELOW_KERNEL,
  views: ['kernel', 'objects', 'machines', 'store', 'drivers', 'base'],
  frontier: ['kernel', 'views', ...BELOW_KERNEL, 'runtime'],
  // The composition root: everything the frontier may import, and the frontier.
  host: ['frontier', 'kernel', 'views', ...BELOW_KERNEL, 'runtime'],
  // Effect adapters for outside providers: canonical digests and the frontier's adapter types only
  // (adapters-frontier-types: no value import of frontier/, which would load the whole Host).
  adapters: ['frontier', 'store', 'base'],
};

/** Imports a folder rule still lets through, each from the one file that needs it (none today). */
const GAPS = {};

/** Every folder of the project with sources. */
const FOLDERS = [...Object.keys(ALLOWED), 'cli', 'tools', 'workloads', 'bench', 'examples', 'test'];

/** Folders besides the product folders that import product folders only through their doors. */
const DOOR_HELD = ['cli', 'tools', 'bench', 'examples', 'workloads'];

/**
 * Modules other folders may import directly although they are not an `index.ts`: each loads
 * nothing heavy (no lmdb, pg, provider SDK), so a schema or the CLI's startup that needs only it
 * does not load the whole folder behind its barrel.
 */
const LIGHT_DOORS = [
  'drivers/receipt.ts', // the run receipt and artifact schemas the Host, objects and Runtime store
  'drivers/confine.ts', // workspace confinement (path checks) the Runtime and frozen tests share
  'drivers/artifacts.ts', // reading a run's declared artifacts
  'drivers/provider-spawn.ts', // how the Runtime spawns a provider process
  'store/records.ts', // the stored records' schemas (Task ids) without the LMDB store
  'store/errors.ts', // the store's error codes, for the Host's code table
  'store/env-gate.ts', // the LMDB open gate the Runtime's own LMDB shares
  'recovery/errors.ts', // recovery's finding codes, for the Host's code table
  'os/identity.ts', // process identity from /proc, without the process-group module's execa
  'kernel/requests/request-revocation.ts', // the revocation search the kernel's admission and the Task view share
  'kernel/errors.ts', // the Host's error codes, on the path of every CLI command that reports one
  'machines/task-context.ts', // the statechart's rejection reasons, which the Host's error codes include
  'kernel/clock.ts', // the clock the CLI's progress lines read
  'store/commit-failure.ts', // recognising a failed commit where the CLI reports errors, without LMDB
  'store/private-root.ts', // the variable --allow-shared-root sets, without LMDB
  'base/coded-error.ts', // the coded error every CLI answer is, without zod (base/index.ts loads it)
  'base/zod-issue.ts', // a zod issue as a coded error's path and message (types of zod only)
  'objects/task-spec.ts', // the Task spec schema the CLI reads spec files with
  'runtime/tree-walk.ts', // walking a workspace tree (work-back) without the Runtime
];

const escape = (path) => path.replace(/[.]/g, '\\.');

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A file-level import cycle (type-only imports included).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...Object.entries(ALLOWED).flatMap(([folder, allowed]) => {
      const rule = {
        name: `folder-${folder}`,
        comment: `${folder}/ imports only ${allowed.length > 0 ? allowed.join(', ') : 'packages'} of the project's folders.`,
        severity: 'error',
      };
      const forbidden = `^(${FOLDERS.filter((f) => f !== folder && !allowed.includes(f)).join('|')})/`;
      const gaps = Object.entries(GAPS).filter(([file]) => file.startsWith(`${folder}/`));
      return [
        {
          ...rule,
          from: { path: `^${folder}/`, pathNot: gaps.map(([file]) => `^${escape(file)}$`) },
          to: { path: forbidden },
        },
        ...gaps.map(([file, targets]) => ({
          ...rule,
          from: { path: `^${escape(file)}$` },
          to: { path: forbidden, pathNot: targets.map((target) => `^${escape(target)}$`) },
        })),
      ];
    }),
    {
      name: 'adapters-frontier-types',
      comment: 'adapters/ takes only types from frontier/ (the EffectAdapter contract), never a value.',
      severity: 'error',
      from: { path: '^adapters/' },
      to: { path: '^frontier/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'cli-no-lab',
      comment:
        'The CLI imports nothing of the lab (workloads/, bench/) or of tools/: the lab registers with it (cli/extensions.ts).',
      severity: 'error',
      from: { path: '^cli/' },
      to: { path: '^(workloads|bench|tools)/' },
    },
    {
      name: 'through-door',
      comment: "An import into another folder goes through that folder's index.ts (or a light door).",
      severity: 'error',
      // The CLI, the workloads, the examples and the benchmarks are held to it as the product
      // folders are: they are users of the public doors.
      from: { path: `^(${[...Object.keys(ALLOWED), ...DOOR_HELD].join('|')})/` },
      to: {
        path: `^(${Object.keys(ALLOWED).join('|')})/`,
        pathNot: [
          '^$1/',
          '^[^/]+/index\\.ts$',
          '^[^/]+/[^/]+/index\\.ts$',
          ...LIGHT_DOORS.map((door) => `^${escape(door)}$`),
        ],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
