// The client's use of the server's `canon.resolve` answer (the rule itself is the server's:
// tests/lsp/test_resolve.py): parsing it, the status bar text, the journal subject.
const test = require('node:test');
const assert = require('node:assert');
const { parseResolved, statusFor, journalSubject } = require('../out/resolve');

const governed = {
  folder: 'file:///ws', kind: 'asset', address: 'src/feed/x', governing: 'src/feed',
  article: 'file:///ws/.canon/articles/src/feed.md', exists: true,
};

test('parseResolved takes the object and refuses null, sentences and other shapes', () => {
  assert.deepStrictEqual(parseResolved(governed), governed);
  assert.strictEqual(parseResolved(null), undefined);
  assert.strictEqual(parseResolved('canon.resolve needs "uri", "path" or "address".'), undefined);
  assert.strictEqual(parseResolved({ address: 1 }), undefined);
});

test('statusFor names the governing article, "no article" otherwise, nothing for store files', () => {
  assert.deepStrictEqual(statusFor(governed), {
    text: '$(book) src/feed',
    tooltip: 'canon: src/feed governs src/feed/x. Click to open the article.',
  });
  const own = { ...governed, address: 'src/feed' };
  assert.match(statusFor(own).tooltip, /src\/feed governs this file/);
  const none = { ...governed, governing: null, exists: false, article: 'file:///ws/.canon/articles/src/feed/x.md' };
  assert.strictEqual(statusFor(none).text, '$(book) no article');
  assert.strictEqual(statusFor({ ...governed, kind: 'journal', address: '', governing: null }), undefined);
  assert.strictEqual(statusFor(undefined), undefined);
});

test('journalSubject: the governing article, else the file\'s own address, else none', () => {
  assert.strictEqual(journalSubject(governed), 'src/feed');
  assert.strictEqual(journalSubject({ ...governed, governing: null }), 'src/feed/x');
  assert.strictEqual(journalSubject({ ...governed, governing: null, address: '' }), undefined);
  assert.strictEqual(journalSubject(undefined), undefined);
});
