/** Every module specifier a TypeScript source imports or re-exports (static and dynamic). */
export function importsOf(source: string): string[] {
  const specs: string[] = [];
  for (const m of source.matchAll(
    /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g,
  )) {
    specs.push((m[1] ?? m[2] ?? m[3])!);
  }
  return specs;
}
