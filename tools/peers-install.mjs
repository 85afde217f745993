#!/usr/bin/env node
// npm run peers:install — installs the real durable-execution peers the side-by-side bench runs
// (bench/peers/peer-packages.json: Restate's server and SDK, DBOS, LangGraph with its SQLite
// checkpointer) into the ignored folder `.peers/<peer>/`, one npm prefix per peer so that their
// dependencies never meet each other's or the project's. Nothing of it is in `dependencies`: a
// consumer of the package never installs a peer. Each prefix gets a package.json holding exactly the
// pinned versions, then `npm install`; a committed lockfile (bench/peers/<peer>/package-lock.json)
// is used when present, so the transitive versions are the ones the committed results ran.
// Idempotent: does nothing when every pinned version is already there.
// Usage: node tools/peers-install.mjs [--check] [peer…]
//   --check: exit 1 listing what is missing, install nothing.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pinned = JSON.parse(readFileSync(join(root, 'bench', 'peers', 'peer-packages.json'), 'utf8'));
const args = process.argv.slice(2);
const check = args.includes('--check');
const chosen = args.filter((a) => !a.startsWith('--'));
for (const name of chosen)
  if (!(name in pinned)) {
    console.error(`peers:install: unknown peer ${name} (known: ${Object.keys(pinned).join(', ')})`);
    process.exit(2);
  }
const peers = chosen.length > 0 ? chosen : Object.keys(pinned);

function installedVersion(prefix, name) {
  const manifest = join(prefix, 'node_modules', name, 'package.json');
  if (!existsSync(manifest)) return undefined;
  return JSON.parse(readFileSync(manifest, 'utf8')).version;
}

const missing = [];
for (const peer of peers) {
  const prefix = join(root, '.peers', peer);
  const wanted = pinned[peer];
  const lacking = Object.entries(wanted).filter(([name, version]) => installedVersion(prefix, name) !== version);
  if (lacking.length === 0) {
    console.log(`peers:install: ${peer} is installed`);
    continue;
  }
  if (check) {
    missing.push(...lacking.map(([name, version]) => `${peer}: ${name}@${version}`));
    continue;
  }
  mkdirSync(prefix, { recursive: true });
  const manifest = { name: `ordivon-peer-${peer}`, private: true, type: 'module', dependencies: wanted };
  writeFileSync(join(prefix, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const lock = join(root, 'bench', 'peers', peer, 'package-lock.json');
  if (existsSync(lock)) copyFileSync(lock, join(prefix, 'package-lock.json'));
  console.log(`peers:install: installing ${peer} into .peers/${peer} (${Object.keys(wanted).join(', ')})`);
  // Restate's server package pulls @scarf/scarf, whose install script reports downloads: off.
  const env = { ...process.env, SCARF_ANALYTICS: 'false', DO_NOT_TRACK: '1' };
  const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: prefix,
    stdio: 'inherit',
    env,
  });
  if (npm.status !== 0) {
    console.error(`peers:install: npm install for ${peer} failed (exit ${npm.status})`);
    process.exit(1);
  }
  const still = Object.entries(wanted).filter(([name, version]) => installedVersion(prefix, name) !== version);
  if (still.length > 0) {
    console.error(`peers:install: ${peer} still lacks ${still.map(([n, v]) => `${n}@${v}`).join(', ')}`);
    process.exit(1);
  }
}
if (missing.length > 0) {
  console.error(`peers:install: missing ${missing.join(', ')}; run npm run peers:install`);
  process.exit(1);
}
