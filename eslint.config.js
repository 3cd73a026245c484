import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { configs as litConfigs } from 'eslint-plugin-lit';
import { configs as wcConfigs } from 'eslint-plugin-wc';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // TypeScript files are checked for undefined names by tsc; plain JS files here all run on Node.
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['demo/site/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/element/**/*.ts', 'test/element/**/*.ts'],
    ...litConfigs['flat/recommended'],
  },
  {
    files: ['src/element/**/*.ts'],
    ...wcConfigs['flat/recommended'],
  },
);
