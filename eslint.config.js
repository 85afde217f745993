// Type-aware lint: a small set of rules, each catching a defect class this code base can have
// (a promise nobody awaits, a switch that forgot an event, a thrown non-Error, an `any` leaking
// past a boundary), not a style preference: prettier owns the layout. no-unnecessary-type-assertion
// is left out: its fix drops the `types: {} as {...}` idiom XState's setup() relies on.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // A workload's repo/, world/, maintainer/ and scripted/ files are frozen fixtures (their own style).
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.agents/**',
      'workloads/*/repo/**',
      'workloads/*/world/**',
      'workloads/*/maintainer/**',
      'workloads/*-v1/scripted/**',
      '**/*.mjs',
      '**/*.js',
    ],
  },
  {
    files: ['**/*.ts', '**/*.cts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's describe/it return promises the runner itself awaits.
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      // A caught error or an abort reason passed on as it is stays allowed.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // More than four positional parameters is a call site that can swap two of them unseen: pass
    // one object instead. Held in the folders listed; the others have functions over it still.
    files: [
      'index.ts',
      'base/**/*.ts',
      'examples/**/*.ts',
      'kernel/**/*.ts',
      'machines/**/*.ts',
      'objects/**/*.ts',
      'os/**/*.ts',
      'runtime/**/*.ts',
      'store/**/*.ts',
    ],
    rules: { 'max-params': ['error', 4] },
  },
  {
    // Tests read JSON answers of child processes and services; typing each one is noise.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
