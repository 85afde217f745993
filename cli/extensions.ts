import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { HostOptions } from '../index.js';
import type { Command } from './command.js';

/** `ordivon serve --demo-harnesses`' harnesses, and how to stop what runs behind them. */
export interface DemoHarnesses {
  harnesses: HostOptions['harnesses'];
  close(): Promise<void>;
}

/**
 * What a folder outside the CLI adds to `ordivon` (the workloads: workloads/register.ts). The CLI
 * imports no workload: it loads each registration module at start, so the demo is a plug-in the
 * CLI works without, and the dependency points from the workloads to the CLI only.
 */
export interface CliRegistration {
  /** Commands listed before the CLI's own, in this order; each loads its work in its handler. */
  commands?: readonly Command[];
  /** The scripted harnesses `serve --demo-harnesses` runs; loads its modules only when called. */
  demoHarnesses?: (acpAgent: 'opencode' | 'hermes-like') => Promise<DemoHarnesses>;
}

/**
 * The registration modules, by path from this module (dist/cli/): each exports `registration`.
 * A path, not an import, so that the CLI compiles and lints without the folder; one that is absent
 * (a build without it) registers nothing.
 */
const REGISTRATIONS = ['../workloads/register.js'];

let loaded: Promise<readonly CliRegistration[]> | undefined;

/** Every registration, loaded once per process. */
export function registrations(): Promise<readonly CliRegistration[]> {
  loaded ??= Promise.all(
    REGISTRATIONS.map(async (path) => {
      const url = new URL(path, import.meta.url);
      if (!existsSync(fileURLToPath(url))) return [];
      const module = (await import(url.href)) as { registration: CliRegistration };
      return [module.registration];
    }),
  ).then((found) => found.flat());
  return loaded;
}

/** The demo harnesses of the first registration that has them. */
export async function demoHarnesses(acpAgent: 'opencode' | 'hermes-like'): Promise<DemoHarnesses> {
  const provide = (await registrations()).find((registration) => registration.demoHarnesses)?.demoHarnesses;
  if (provide === undefined)
    throw new Error('no registration provides the demo harnesses (a build without workloads/)');
  return provide(acpAgent);
}
