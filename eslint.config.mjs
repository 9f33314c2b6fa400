// One lint for the tree: typescript-eslint's type-aware rules on the TypeScript (a floating
// promise or an unused value needs the type checker to be seen), ESLint's own on the JavaScript
// (bench, CI, test runner, the site's browser scripts). Layout is Prettier's, so ESLint's
// stylistic rules are off (eslint-config-prettier).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const unused = [
  'error',
  {
    argsIgnorePattern: '^_',
    varsIgnorePattern: '^_',
    caughtErrors: 'none',
    ignoreRestSiblings: true,
  },
];
const longFunctions = ['warn', { max: 70, skipBlankLines: true, skipComments: true, IIFEs: true }];

// Rules of ESLint's own, tuned where the tree's idioms are deliberate: an empty catch means "the
// failure changes nothing here"; a parser must name control characters to refuse them; `a && b()`
// and `c ? f() : g()` as statements read as what they are.
const shared = {
  'no-empty': ['error', { allowEmptyCatch: true }],
  'no-control-regex': 'off',
};
const expressions = ['error', { allowShortCircuit: true, allowTernary: true }];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'bench/results/', 'src/client/schema.d.ts'] },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { project: './tsconfig.lint.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // tap's subtests are queued and awaited by their parent: its idiom is not to await them.
        {
          allowForKnownSafePromises: [
            { from: 'package', name: 'PromiseWithSubtest', package: '@tapjs/core' },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': unused,
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'off',
      ...shared,
      '@typescript-eslint/no-unused-expressions': expressions,
      'max-lines-per-function': longFunctions,
    },
  },
  {
    // Type checks only (never run): their values exist to be typed, their statements to be refused.
    files: ['test/types/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': 'off',
      '@typescript-eslint/no-unused-expressions': 'off',
    },
  },
  {
    files: ['test/**/*.ts'],
    // A test's subtests are one callback each; their length is the scenario's, not a function's.
    rules: { 'max-lines-per-function': 'off' },
  },
  {
    files: ['**/*.mjs', '.ci/**', 'bench/**/*.js'],
    languageOptions: { globals: globals.node },
    rules: { ...shared, 'no-unused-vars': unused, 'no-unused-expressions': expressions },
  },
  {
    files: ['public/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'script' },
    rules: { ...shared, 'no-unused-vars': unused, 'no-unused-expressions': expressions },
  },
  prettier,
);
