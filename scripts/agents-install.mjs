#!/usr/bin/env node
// npm run agents:install — installs the pinned real ACP agents the driver tests run against into
// the ignored folder `.agents/` (100–400 MB each: too heavy for every `npm install`, so they are not
// dependencies). Idempotent: does nothing when every pinned version is already there.
// Usage: node scripts/agents-install.mjs [--check]   (--check: exit 1 listing what is missing, install nothing)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const prefix = join(root, '.agents');
/** Package → pinned version; drivers/acp/acp-agents.ts knows how to launch each one from .agents/. */
const PINNED = JSON.parse(readFileSync(join(root, 'scripts', 'agent-packages.json'), 'utf8'));

function installedVersion(name) {
  const manifest = join(prefix, 'node_modules', name, 'package.json');
  if (!existsSync(manifest)) return undefined;
  try {
    return JSON.parse(readFileSync(manifest, 'utf8')).version;
  } catch {
    return undefined;
  }
}

const missing = Object.entries(PINNED).filter(([name, version]) => installedVersion(name) !== version);
if (missing.length === 0) {
  console.log(`agents:install: ${Object.keys(PINNED).length} pinned agents already in .agents/`);
  process.exit(0);
}
const specs = missing.map(([name, version]) => `${name}@${version}`);
if (process.argv.includes('--check')) {
  console.error(`agents:install: missing ${specs.join(' ')}`);
  process.exit(1);
}
mkdirSync(prefix, { recursive: true });
// All pinned packages in one install: `npm install --no-save` prunes packages it was not given.
// --ignore-scripts: no agent needs its install scripts for ACP over stdio (gemini-cli's node-pty and
// keytar are optional; the platform binaries of codex-acp and claude-agent-acp are plain packages).
const all = Object.entries(PINNED).map(([name, version]) => `${name}@${version}`);
console.log(`agents:install: npm install --prefix .agents ${all.join(' ')}`);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const result = spawnSync(
  npm,
  [
    'install',
    '--prefix',
    prefix,
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
const still = Object.entries(PINNED).filter(([name, version]) => installedVersion(name) !== version);
if (still.length > 0) {
  console.error(`agents:install: still missing after install: ${still.map(([n, v]) => `${n}@${v}`).join(' ')}`);
  process.exit(1);
}
