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
 * What a folder outside the CLI adds to `ordivon` (the lab: workloads/register.ts, bench/register.ts).
 * The CLI imports no lab module: it loads each registration module when a command line needs more
 * than its own commands (cli/ordivon.ts), so the demo and the benchmarks are plug-ins the CLI works
 * without, and the dependency points from the lab to the CLI only.
 */
export interface CliRegistration {
  /** Commands listed before the CLI's own, in this order; each loads its work in its handler. */
  commands?: readonly Command[];
  /** Commands listed after the CLI's own, in this order (`bench`). */
  commandsAfter?: readonly Command[];
  /** The scripted harnesses `serve --demo-harnesses` runs; loads its modules only when called. */
  demoHarnesses?: (acpAgent: 'opencode' | 'hermes-like') => Promise<DemoHarnesses>;
}

/**
 * The registration modules, by path from this module (dist/cli/): each exports `registration`.
 * A path, not an import, so that the CLI compiles and lints without the lab; one that is absent
 * (a build without it) registers nothing.
 */
const REGISTRATIONS = ['../workloads/register.js', '../bench/register.js'];

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
