import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The page imports only types from 'cadre', which are erased: the browser bundle has none of it.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // React libraries mark modules 'use client', which means nothing to a plain client bundle.
    rollupOptions: { onwarn: (warning, warn) => warning.code === 'MODULE_LEVEL_DIRECTIVE' || warn(warning) },
  },
  logLevel: 'warn',
});
