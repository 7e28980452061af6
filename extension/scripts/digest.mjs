// Writes <outputDir>/source-digest.json: the SHA-256 of the sources the bundle was built
// from, computed as ansor_lab.jupyter.labext.source_digest computes it (a test compares).
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const entries = ['package.json', 'tsconfig.json', 'src', 'style'];
const files = [];
const walk = p => {
  if (statSync(p).isDirectory()) {
    for (const name of readdirSync(p)) walk(join(p, name));
  } else {
    files.push(relative(root, p).split(sep).join('/'));
  }
};
for (const e of entries) walk(join(root, e));
files.sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : Buffer.from(a) > Buffer.from(b) ? 1 : 0));
const h = createHash('sha256');
for (const f of files) {
  h.update(Buffer.concat([Buffer.from(f), Buffer.from([0])]));
  h.update(Buffer.concat([readFileSync(join(root, f)), Buffer.from([0])]));
}
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const out = join(root, pkg.jupyterlab.outputDir, 'source-digest.json');
writeFileSync(out, JSON.stringify({ sha256: h.digest('hex'), files }, null, 1) + '\n');
console.log(`source digest written to ${out}`);
