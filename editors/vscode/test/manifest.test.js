// SPEC §12: a workspace (a cloned repository) never chooses the executable that runs.
const test = require('node:test');
const assert = require('node:assert');
const manifest = require('../package.json');

test('canon.server.path is machine scoped: no workspace or folder settings file can set it', () => {
  const props = manifest.contributes.configuration.properties;
  assert.strictEqual(props['canon.server.path'].scope, 'machine');
});

test('untrusted workspaces: limited, with the server path, root and mounts restricted', () => {
  const untrusted = manifest.capabilities.untrustedWorkspaces;
  assert.strictEqual(untrusted.supported, 'limited');
  assert.deepStrictEqual([...untrusted.restrictedConfigurations].sort(), ['canon.mounts', 'canon.root', 'canon.server.path']);
  assert.ok(untrusted.description.length > 0);
});

test('the extension runs from the esbuild bundle, and packaging never ships node_modules', () => {
  assert.strictEqual(manifest.main, './dist/extension.js');
  assert.match(manifest.scripts.package, /--no-dependencies/);
  assert.match(manifest.scripts['vscode:prepublish'], /bundle:python/);
});

test('the six canon options are settings; unset (null) behaviour options leave the files in charge', () => {
  const props = manifest.contributes.configuration.properties;
  for (const key of ['root', 'mounts', 'surface', 'resurface', 'retrieval', 'standout']) {
    assert.ok(props[`canon.${key}`], key);
  }
  for (const key of ['surface', 'resurface', 'retrieval', 'standout']) {
    assert.strictEqual(props[`canon.${key}`].default, null, key); // workspace/configuration sends null
    assert.ok(props[`canon.${key}`].type.includes('null'), key);
  }
  assert.strictEqual(props['canon.standout'].minimum, 1);
  assert.deepStrictEqual(props['canon.retrieval'].enum, ['none', 'lexical', null]);
  const commands = manifest.contributes.commands.map((c) => c.command);
  assert.ok(commands.includes('canon.client.showSettings'));
});
