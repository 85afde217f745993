/**
 * The benchmark suite's scenarios, in the order it runs them. A module of its own, importing
 * nothing, so `ordivon bench`'s flags list and check them without loading the bench.
 */
export const SCENARIOS = [
  'recovery',
  'floor',
  'peer',
  'checkpoint',
  'disk',
  'admission',
  'temporal',
  'reconciliation',
  'cluster',
  'startup',
  'confinement',
  'loop-cancel',
  'peers',
] as const;
export type Scenario = (typeof SCENARIOS)[number];
