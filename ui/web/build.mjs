// Builds the explorer's page into ../bundle/app: src/main.ts and style.css bundled and minified
// by esbuild under content-hashed names, elkjs's web worker copied under a hashed name, and
// index.html written to point at them. `make ui-bundle` runs it after `npm ci` and the type check.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'bundle', 'app');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const worker = createRequire(import.meta.url).resolve('elkjs/lib/elk-worker.min.js');
const workerHash = createHash('sha256').update(readFileSync(worker)).digest('hex').slice(0, 10);
const workerName = `elk-worker-${workerHash}.js`;
copyFileSync(worker, join(out, workerName));

const result = await build({
  entryPoints: [join(here, 'src', 'main.ts'), join(here, 'src', 'style.css')],
  bundle: true,
  minify: true,
  sourcemap: false,
  format: 'esm',
  target: 'es2022',
  outdir: out,
  entryNames: '[name]-[hash]',
  define: { ELK_WORKER_URL: JSON.stringify('/' + workerName) },
  metafile: true,
  logLevel: 'warning',
  legalComments: 'linked',
});
const names = Object.keys(result.metafile.outputs).map((p) => p.split('/').pop());
const js = names.find((n) => n.startsWith('main-') && n.endsWith('.js'));
const css = names.find((n) => n.startsWith('style-') && n.endsWith('.css'));
const html = readFileSync(join(here, 'index.html'), 'utf8').replace('%CSS%', '/' + css).replace('%JS%', '/' + js);
writeFileSync(join(out, 'index.html'), html);
console.log(`ui bundle: ${out}: ${names.join(', ')}, ${workerName}`);
