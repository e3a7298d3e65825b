// Lint rules: the recommended sets of ESLint and typescript-eslint, type-aware, plus the two rules
// that catch the bugs most likely in this codebase: floating promises and misused promises.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'client/dist/', 'client/.readme-*/', 'client/src/schema.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests read JSON response bodies freely; the assertions are the type checks there.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  // Two edges over one shared core: api/ (HTTP) and workers/ (jobs) stand side by side on db/ and
  // never import each other; db/ imports neither (docs/ARCHITECTURE.md).
  ...[
    { room: 'api', forbidden: 'workers' },
    { room: 'workers', forbidden: 'api' },
    { room: 'db', forbidden: 'api|workers' },
  ].map(({ room, forbidden }) => ({
    files: [`${room}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `(^|/)(${forbidden})/`,
              message: `${room}/ stands on db/ and never imports ${forbidden.replace('|', ' or ')}/.`,
            },
          ],
        },
      ],
    },
  })),
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
