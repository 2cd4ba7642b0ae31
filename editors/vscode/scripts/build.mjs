// Bundles the extension and vscode-languageclient into one file, dist/extension.js, so the .vsix
// carries no node_modules. `vscode` is provided by the editor at run time.
import * as esbuild from 'esbuild';

await esbuild.build({
  entryPoints: ['src/extension.ts'],
  outfile: 'dist/extension.js',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'],
  sourcemap: false,
  minify: process.argv.includes('--minify'),
  logLevel: 'warning',
});
