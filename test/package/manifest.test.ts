import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  license: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  optionalDependencies?: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { os?: string[]; cpu?: string[]; optional?: boolean; devOptional?: boolean }>;
};

describe('package.json installs on any platform', () => {
  it('lists no platform-bound package as a required dependency or devDependency', () => {
    // npm refuses to install a package whose os/cpu do not match (EBADPLATFORM) unless it is optional.
    const bound = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).filter((name) => {
      const entry = lock.packages[`node_modules/${name}`];
      return entry?.os !== undefined || entry?.cpu !== undefined;
    });
    assert.deepEqual(bound, []);
  });

  it('gives a consumer no agent binary: opencode is pinned for agents:install, not a dependency of any kind', () => {
    // Optional dependencies are installed with --omit=dev: as one, opencode's 177 MB binary went
    // into every consumer's node_modules.
    const all = { ...manifest.dependencies, ...manifest.devDependencies, ...manifest.optionalDependencies };
    assert.equal(all['opencode-linux-x64'], undefined);
    assert.equal(lock.packages['node_modules/opencode-linux-x64'], undefined);
    const pinned = JSON.parse(readFileSync(join(ROOT, 'tools', 'demo-agent-packages.json'), 'utf8')) as Record<
      string,
      { version: string; platform: string }
    >;
    assert.deepEqual(Object.keys(pinned), ['opencode-linux-x64']);
    assert.equal(pinned['opencode-linux-x64']!.platform, 'linux-x64');
  });
});

describe('the license', () => {
  it('is the full Apache License 2.0 text in LICENSE, as package.json says', () => {
    assert.equal(manifest.license, 'Apache-2.0');
    const text = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    assert.match(text, /^\s+Apache License\n\s+Version 2\.0, January 2004\n/);
    for (let section = 1; section <= 9; section++) assert.match(text, new RegExp(`^\\s+${section}\\. \\w`, 'm'));
    assert.match(text, /END OF TERMS AND CONDITIONS/);
  });
});
