---@brief
---
--- canon_ls: the canon-ls language server for a repository's `.canon/` project memory
--- (articles that govern files, and a journal).
---
--- Install the server so `canon-ls` is on PATH (the canon-ls README's Install: `pipx install`
--- from a clone of the repository), then:
--- ```lua
--- vim.lsp.enable('canon_ls')
--- ```
--- It attaches to every filetype: any file can be governed by an article. The root is the
--- nearest directory holding `.canon/` (else `.git`); without a store the server stays quiet
--- but still offers "Create article for <address>".
---
--- Server settings (section `canon`, answered through workspace/configuration):
--- `root`, `mounts`, `surface`, `resurface`, `retrieval`, `standout` (the six canon options;
--- set here they win over the project's canon.toml and ~/.config/canon/settings.json),
--- `inlayHints = { enabled, maxLength, imports }`, `codeLens = { enabled }`,
--- `staleness = { enabled }`, `assetDiagnostics = { severity }`.

---@type vim.lsp.Config
return {
  cmd = { 'canon-ls' },
  -- No `filetypes`: attach to all of them.
  root_markers = { '.canon', '.git' },
  settings = { canon = vim.empty_dict() },
}
