#!/usr/bin/env node
// npm run agents:install — installs what only a clone runs, never a consumer of the package:
// - the pinned real ACP agents the driver tests run against (tools/agent-packages.json) into the
//   ignored folder `.agents/` (100–400 MB each: too heavy for every `npm install`);
// - the demo's platform-bound agent binaries (tools/demo-agent-packages.json: opencode, a 177 MB
//   linux-x64 ELF) into `.agents/demo/`. As an optional dependency npm installed it into every
//   consumer's node_modules too (optional dependencies survive --omit=dev), and as a
//   devDependency npm refuses to install on another platform (EBADPLATFORM). `npm start` installs
//   this group alone before the demo (`prestart`).
// Idempotent: does nothing when every pinned version is already there. Each group is its own npm
// prefix: `npm install --no-save` prunes packages it was not given, so one group's install must not
// see the other's.
// Usage: node tools/agents-install.mjs [--demo] [--check]
//   --demo: only the demo's agents; --check: exit 1 listing what is missing, install nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (file) => JSON.parse(readFileSync(join(root, 'tools', file), 'utf8'));
const platform = `${process.platform}-${process.arch}`;

/** Package → pinned version, per prefix; drivers/acp/ knows how to launch each one from there. */
const acp = { name: 'ACP agents', prefix: join(root, '.agents'), pinned: read('agent-packages.json') };
const demoPins = Object.entries(read('demo-agent-packages.json'));
const demo = {
  name: 'demo agents',
  prefix: join(root, '.agents', 'demo'),
  // A binary built for another platform is not installed there; the demo says what it lacks.
  pinned: Object.fromEntries(
    demoPins.filter(([, pin]) => pin.platform === platform).map(([n, pin]) => [n, pin.version]),
  ),
};
for (const [name, pin] of demoPins)
  if (pin.platform !== platform)
    console.log(`agents:install: ${name} is for ${pin.platform}, not ${platform}: skipped`);

function installedVersion(prefix, name) {
  const manifest = join(prefix, 'node_modules', name, 'package.json');
  if (!existsSync(manifest)) return undefined;
  try {
    return JSON.parse(readFileSync(manifest, 'utf8')).version;
  } catch {
    return undefined;
  }
}

const missingOf = (group) =>
  Object.entries(group.pinned).filter(([name, version]) => installedVersion(group.prefix, name) !== version);
const specsOf = (entries) => entries.map(([name, version]) => `${name}@${version}`);

const groups = process.argv.includes('--demo') ? [demo] : [acp, demo];
const check = process.argv.includes('--check');
let failed = false;
for (const group of groups) {
  const count = Object.keys(group.pinned).length;
  const missing = missingOf(group);
  if (missing.length === 0) {
    console.log(`agents:install: ${count} pinned ${group.name} already in ${group.prefix}`);
    continue;
  }
  if (check) {
    console.error(`agents:install: missing ${specsOf(missing).join(' ')}`);
    failed = true;
    continue;
  }
  mkdirSync(group.prefix, { recursive: true });
  // All pinned packages of the group in one install (the pruning above).
  // --ignore-scripts: no agent needs its install scripts (gemini-cli's node-pty and keytar are
  // optional; the platform binaries of codex-acp, claude-agent-acp and opencode are plain packages).
  const all = specsOf(Object.entries(group.pinned));
  console.log(`agents:install: npm install --prefix ${group.prefix} ${all.join(' ')}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(
    npm,
    [
      'install',
      '--prefix',
      group.prefix,
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--no-package-lock',
      ...all,
    ],
    { stdio: 'inherit', cwd: root },
  );
  if (result.status !== 0) process.exit(result.status ?? 1);
  const still = missingOf(group);
  if (still.length > 0) {
    console.error(`agents:install: still missing after install: ${specsOf(still).join(' ')}`);
    process.exit(1);
  }
}
if (failed) process.exit(1);
