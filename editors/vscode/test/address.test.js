// The client's view of SPEC §3 (addresses) and §4 (nearest ancestor governs), used by the status bar.
const test = require('node:test');
const assert = require('node:assert');
const path = require('path');
const { addressOf, governingArticle, storeRoot } = require('../out/address');

test('SPEC §3 table: addresses of project-relative paths', () => {
  const table = {
    'src/core/config.ts': 'src/core/config',
    'src/core/config.test.ts': 'src/core/config.test',
    'docs/v1.2/notes.md': 'docs/v1.2/notes',
    '.env': '.env',
    'src/.eslintrc.json': 'src/.eslintrc',
    './src//core/./config.ts': 'src/core/config',
    '../../etc/passwd': 'etc/passwd',
    'src/core/': 'src/core',
    'src\\core\\config.ts': 'src/core/config',
    Makefile: 'Makefile',
    'archive.tar.gz': 'archive.tar',
  };
  for (const [input, want] of Object.entries(table)) {
    assert.strictEqual(addressOf(input), want, input);
  }
});

test('SPEC §4: the exact article, else the nearest ancestor, else none', () => {
  const ws = path.resolve('/ws');
  const have = new Set([path.join(ws, '.canon/articles/src/feed.md'), path.join(ws, '.canon/articles/src/app.md')]);
  const exists = (p) => have.has(p);
  assert.deepStrictEqual(governingArticle(ws, path.join(ws, 'src/app.py'), '', exists), {
    address: 'src/app', governing: 'src/app', file: path.join(ws, '.canon/articles/src/app.md'),
  });
  assert.strictEqual(governingArticle(ws, path.join(ws, 'src/feed/x/y.ts'), '', exists).governing, 'src/feed');
  assert.strictEqual(governingArticle(ws, path.join(ws, 'lib/z.ts'), '', exists), undefined);
  assert.strictEqual(governingArticle(ws, path.resolve('/elsewhere/a.ts'), '', exists), undefined);
  // an article file is governed by itself
  assert.strictEqual(
    governingArticle(ws, path.join(ws, '.canon/articles/src/app.md'), '', exists).governing, 'src/app');
});

test('canon.root moves the store, absolute or relative to the folder', () => {
  assert.strictEqual(storeRoot('/ws', ''), path.join('/ws', '.canon'));
  assert.strictEqual(storeRoot('/ws', 'memory/.canon'), path.join('/ws', 'memory/.canon'));
  assert.strictEqual(storeRoot('/ws', '/srv/store'), '/srv/store');
});
