-- Headless Neovim against the real canon-ls, with the plugin installed and set up by the init
-- file the test wrote from editors/neovim/README.md (packadd, lazy.nvim, ...).
-- usage: nvim --headless -u <init.lua> -i NONE -l e2e.lua <workspace> [full|install|typing|imports]
-- `install` checks only what proves the installation: attach, hover, :CanonOpen.
-- `imports` adds the hover on an import of src/main.py (the module it imports).
-- Prints "ok - <name>" / "FAIL - <name>: <detail>" lines and "N passed, M failed"; exit 0 only
-- when everything passed. A watchdog ends a hung run with exit 2.
local ws, mode = arg[1], arg[2] or 'full'
local APP_CAPSULE = 'Entry point: wires config and routes; never reads the environment directly.'
local JOURNAL_TEXT = 'Decided to keep util.run synchronous for now.'
local FEED_EVIDENCE = '2 commits in 59 days since updated 2026-10-01 touched src/feed.py'

local passed, failed = 0, 0
local function check(name, ok, detail)
  if ok then
    passed = passed + 1
    io.stdout:write(('ok - %s\n'):format(name))
  else
    failed = failed + 1
    io.stdout:write(('FAIL - %s: %s\n'):format(name, vim.inspect(detail):gsub('\n', ' ')))
  end
  io.stdout:flush()
end
local function finish()
  io.stdout:write(('%d passed, %d failed\n'):format(passed, failed))
  io.stdout:flush()
  vim.cmd((failed == 0 and passed > 0) and 'qall!' or 'cquit! 1')
end

local watchdog = assert(vim.uv.new_timer())
watchdog:start(140000, 0, vim.schedule_wrap(function()
  io.stdout:write('FAIL - watchdog: timed out after 140 s\n')
  io.stdout:flush()
  vim.cmd('cquit! 2')
end))

vim.cmd('filetype on') -- vim.lsp.enable starts clients on FileType
vim.opt.swapfile = false
vim.opt.hidden = true

local function wait(ms, fn)
  local value
  local ok = vim.wait(ms, function()
    value = fn()
    return value ~= nil and value ~= false
  end, 25)
  return ok and value or nil
end

local function open(rel)
  vim.cmd.edit(vim.fn.fnameescape(ws .. '/' .. rel))
  local buf = vim.api.nvim_get_current_buf()
  local client = wait(20000, function()
    local c = vim.lsp.get_clients({ bufnr = buf, name = 'canon_ls' })[1]
    return c and c.initialized and c or nil
  end)
  return buf, client
end

local function request(buf, method, params)
  local res, err = vim.lsp.buf_request_sync(buf, method, params, 10000)
  for _, r in pairs(res or {}) do
    if r.err then
      return nil, r.err
    end
    return r.result
  end
  return nil, err or 'no response'
end

local function text_of(contents)
  if type(contents) == 'string' then
    return contents
  end
  if contents.value then
    return contents.value
  end
  local parts = {}
  for _, c in ipairs(contents) do
    parts[#parts + 1] = type(c) == 'string' and c or c.value
  end
  return table.concat(parts, '\n')
end

local function label_of(hint)
  if type(hint.label) == 'string' then
    return hint.label
  end
  local parts = {}
  for _, p in ipairs(hint.label) do
    parts[#parts + 1] = p.value
  end
  return table.concat(parts)
end

local function action_titles(buf, line)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = line, character = 0 }, ['end'] = { line = line, character = 0 } },
    context = { diagnostics = {} },
  }
  local result, err = request(buf, 'textDocument/codeAction', params)
  local titles = {}
  for _, a in ipairs(result or {}) do
    titles[#titles + 1] = a.title
  end
  return titles, err
end

local function has(list, wanted)
  return vim.tbl_contains(list, wanted)
end

-- 1. attach on a governed file (SPEC §10: every workspace folder with a store is served)
local buf, client = open('src/app.py')
check('attach on src/app.py', client ~= nil, vim.lsp.get_clients())
if not client then
  return finish()
end
check('root is the workspace (root_markers .canon/.git)', client.root_dir == ws, client.root_dir)
check('the init file ran require("canon").setup()', vim.fn.exists(':CanonOpen') == 2, vim.o.rtp)

-- 1b. :checkhealth canon finds the server and the store
vim.cmd('checkhealth canon')
local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
check(':checkhealth canon reports no error',
  report:find('server command: canon-ls', 1, true) ~= nil and not report:find('ERROR', 1, true), report)
vim.cmd('bwipe!')
vim.cmd.buffer(buf)

-- 2. hover on line 1 shows the file's governing article (SPEC §10 hover)
local hover, herr = request(buf, 'textDocument/hover', {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  position = { line = 0, character = 4 },
})
local htext = hover and text_of(hover.contents) or ''
check('hover shows the capsule', htext:find(APP_CAPSULE, 1, true) ~= nil, hover or herr)
check('hover names the governing address', htext:find('src/app', 1, true) ~= nil, htext)

-- 2b. :CanonOpen opens the governing article, which the server names (canon.resolve)
vim.cmd('CanonOpen')
local opened_article = wait(10000, function()
  local name = vim.api.nvim_buf_get_name(0)
  return name:find('/.canon/articles/src/app.md', 1, true) and name or nil
end)
check(':CanonOpen opens .canon/articles/src/app.md', opened_article ~= nil, vim.api.nvim_buf_get_name(0))
vim.cmd.buffer(buf)
local function stop_and_finish()
  client:stop()
  wait(5000, function()
    return client:is_stopped()
  end)
  return finish()
end
if mode == 'install' then
  return stop_and_finish()
end

-- `imports`: hover on an import shows the imported module's article (SPEC §10 hover)
if mode == 'imports' then
  local main = open('src/main.py')
  local params = { textDocument = { uri = vim.uri_from_bufnr(main) }, position = { line = 0, character = 10 } }
  local imported = wait(10000, function()
    local h = request(main, 'textDocument/hover', params)
    local t = h and text_of(h.contents) or ''
    return t:find("Fetches the feed; retries are the caller's job.", 1, true) and t or nil
  end)
  check("hover on an import shows the imported module's capsule", imported ~= nil,
    request(main, 'textDocument/hover', params))
  return stop_and_finish()
end

-- `typing`: an article's diagnostics follow its unsaved text (SPEC §10 diagnostics as you type)
if mode == 'typing' then
  local path = ws .. '/.canon/articles/src/app.md'
  local saved = table.concat(vim.fn.readfile(path, 'b'), '\n')
  local art = open('.canon/articles/src/app.md')
  local function broken()
    for _, d in ipairs(vim.diagnostic.get(art)) do
      if d.message:find('[[src/not/there]]', 1, true) then
        return d
      end
    end
  end
  local last = vim.api.nvim_buf_line_count(art)
  vim.api.nvim_buf_set_lines(art, last, last, false, { 'See [[src/not/there]].' })
  local typed = wait(20000, broken)
  check('a broken link typed into an unsaved article has its diagnostic',
    typed ~= nil and typed.lnum == last, vim.diagnostic.get(art))
  vim.api.nvim_buf_set_lines(art, last, last + 1, false, {})
  local cleared = wait(20000, function()
    return broken() == nil
  end)
  check('deleting the link clears the diagnostic', cleared ~= nil, vim.diagnostic.get(art))
  check('the article file was not written', table.concat(vim.fn.readfile(path, 'b'), '\n') == saved, path)
  return stop_and_finish()
end

-- 3. inlay hint at the end of line 1 (the plugin's LspAttach turns hints on)
local hints = wait(10000, function()
  local got = vim.lsp.inlay_hint.get({ bufnr = buf })
  return #got > 0 and got or nil
end) or {}
local hint = hints[1] and hints[1].inlay_hint
local first_line = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1]
check('inlay hint on line 1 carries the capsule',
  hint and hint.position.line == 0 and label_of(hint):find('Entry point', 1, true) ~= nil, hints)
check('inlay hint sits at the end of line 1',
  hint and hint.position.character == #first_line, { hint = hint, len = #first_line })

-- 3b. code lens on line 1 (SPEC §10 code lens)
local lenses, lerr = request(buf, 'textDocument/codeLens', { textDocument = { uri = vim.uri_from_bufnr(buf) } })
local lens = lenses and lenses[1]
check('code lens on line 1 names src/app and its date',
  lens and lens.range.start.line == 0 and lens.command
    and lens.command.title:find('canon: src/app', 1, true) ~= nil
    and lens.command.title:find('2026-11-20', 1, true) ~= nil, lenses or lerr)

-- 4. code actions on a governed file: update + journal (SPEC §10 code actions)
local titles, terr = action_titles(buf, 0)
check('code actions on src/app.py: update and journal',
  has(titles, 'Update governing article src/app') and has(titles, 'Journal an entry about src/app'),
  { titles = titles, err = terr })

-- 5. an orphan article has its diagnostic (SPEC §6.1 item 5, §9, §10 diagnostics)
local legacy = open('.canon/articles/src/legacy.md')
local orphan = wait(20000, function()
  for _, d in ipairs(vim.diagnostic.get(legacy)) do
    local code = d.code or vim.tbl_get(d, 'user_data', 'lsp', 'code') or ''
    if (tostring(code) .. ' ' .. d.message):lower():find('orphan', 1, true) then
      return d
    end
  end
end)
check('orphan article src/legacy has an orphan diagnostic', orphan ~= nil, vim.diagnostic.get(legacy))

-- 6. an ungoverned file: create + journal offered; applying "Create article" creates the file
local util = open('src/util.py')
titles, terr = action_titles(util, 0)
check('code actions on src/util.py: create and journal',
  has(titles, 'Create article for src/util') and has(titles, 'Journal an entry about src/util'),
  { titles = titles, err = terr })
local article = ws .. '/.canon/articles/src/util.md'
vim.lsp.buf.code_action({
  apply = true,
  filter = function(a)
    return a.title == 'Create article for src/util'
  end,
  range = { start = { 1, 0 }, ['end'] = { 1, 0 } },
})
local created = wait(10000, function()
  -- a WorkspaceEdit lands in a buffer (undoable); write it as a user would
  vim.cmd('silent! wall')
  local st = vim.uv.fs_stat(article)
  return st and st.size > 0
end)
check('"Create article for src/util" creates .canon/articles/src/util.md', created ~= nil,
  vim.fn.glob(ws .. '/.canon/articles/**', true, true))
vim.cmd.buffer(util)

-- 7. :CanonJournal lands one journal entry (SPEC §6 journal, via client:exec_cmd)
vim.cmd('CanonJournal ' .. JOURNAL_TEXT)
local entry = wait(10000, function()
  for _, f in ipairs(vim.fn.glob(ws .. '/.canon/journal/*.md', true, true)) do
    local text = table.concat(vim.fn.readfile(f), '\n')
    if text:find(JOURNAL_TEXT, 1, true) then
      return { file = f, text = text }
    end
  end
end)
check(':CanonJournal writes an entry', entry ~= nil, vim.fn.glob(ws .. '/.canon/**', true, true))
check('the entry names its subject', entry and entry.text:find('src/util', 1, true) ~= nil, entry)

-- 8. :CanonMap shows the map in a scratch buffer
vim.cmd('CanonMap')
local map_text = wait(10000, function()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):find('canon://map', 1, true) then
      return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
    end
  end
end)
check(':CanonMap lists src/app with its capsule',
  map_text and map_text:find('src/app: ' .. APP_CAPSULE, 1, true) ~= nil, map_text)

-- 8b. a file Neovim has no filetype for is served too (setup()'s BufReadPost start)
vim.fn.writefile({ 'opaque data' }, ws .. '/src/blob.zzq')
local blob, blob_client = open('src/blob.zzq')
check('a file without a filetype gets canon-ls', blob_client ~= nil and vim.bo[blob].filetype == '',
  { ft = vim.bo[blob].filetype, clients = #vim.lsp.get_clients({ bufnr = blob }) })

-- 9. :CanonSearch picks from canon.search results and opens the chosen article
vim.cmd.buffer(buf)
local picked
vim.ui.select = function(items, opts, on_choice)
  picked = { items = items, prompt = opts.prompt }
  on_choice(items[1])
end
vim.cmd('CanonSearch config routes')
local opened = wait(10000, function()
  local name = vim.api.nvim_buf_get_name(0)
  return name:find('.canon/articles/src/app.md', 1, true) and name or nil
end)
check(':CanonSearch offers src/app and opens its article',
  picked and picked.items[1] and picked.items[1].address == 'src/app' and opened ~= nil, picked)

-- 9b. a stale article's file: the hover and the code lens carry the evidence (SPEC §9.1), and
-- :CanonHistory opens its history (SPEC §9.2), "Show changes since …" the diff since then
local feed = open('src/feed.py')
local feed_hover = wait(30000, function()
  local h = request(feed, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(feed) },
    position = { line = 0, character = 5 },
  })
  local t = h and text_of(h.contents) or ''
  return t:find(FEED_EVIDENCE, 1, true) and t or nil
end)
check('the stale hover shows the commit count', feed_hover ~= nil,
  request(feed, 'textDocument/hover', { textDocument = { uri = vim.uri_from_bufnr(feed) },
    position = { line = 0, character = 5 } }))
local feed_lenses = request(feed, 'textDocument/codeLens', { textDocument = { uri = vim.uri_from_bufnr(feed) } })
local lens_titles = {}
for _, l in ipairs(feed_lenses or {}) do
  lens_titles[#lens_titles + 1] = l.command and l.command.title
end
check('the stale code lens reads "stale · 2 commits since 2026-10-01"',
  has(lens_titles, 'stale · 2 commits since 2026-10-01'), lens_titles)
vim.cmd('CanonHistory')
local history = wait(20000, function()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):find('canon://history', 1, true) then
      local t = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
      return t ~= '' and t or nil
    end
  end
end)
check(':CanonHistory opens the history of src/feed',
  history and history:find('History of src/feed', 1, true) ~= nil
    and history:find('Retry on 429', 1, true) ~= nil, history)
vim.cmd.buffer(feed)
vim.lsp.buf.code_action({
  apply = true,
  filter = function(a)
    return a.title == 'Show changes since src/feed was updated'
  end,
  range = { start = { 1, 0 }, ['end'] = { 1, 0 } },
})
local diff = wait(20000, function()
  local name = vim.api.nvim_buf_get_name(0)
  if name:find('since%-updated%.diff$') then
    return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  end
end)
check('"Show changes since src/feed was updated" opens the diff',
  diff and diff:find('+    return retry(get)', 1, true) ~= nil, diff or vim.api.nvim_buf_get_name(0))

-- 10. :CanonStatus reports the store (canon.status)
local notified
vim.notify = function(msg)
  notified = msg
end
vim.cmd.buffer(buf)
vim.cmd('CanonStatus')
local status = wait(10000, function()
  return notified
end)
check(':CanonStatus shows the store status', status and status:find('articles', 1, true) ~= nil, status)

-- 11. setup() settings are the explicit layer of the six options (SPEC §13): :CanonSettings
client.settings = vim.tbl_deep_extend('force', client.settings or {}, { canon = { standout = 2.5 } })
client:notify('workspace/didChangeConfiguration', { settings = client.settings })
local shown
for _ = 1, 20 do
  vim.cmd('CanonSettings')
  local text = wait(3000, function()
    if vim.api.nvim_buf_get_name(0):find('canon://settings/', 1, true) then
      return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
    end
  end)
  if text and vim.bo.buftype == 'nofile' then
    vim.cmd('bwipeout')
  end
  if text and text:find('standout = 2.5', 1, true) then
    shown = text
    break
  end
  vim.wait(200)
end
check(':CanonSettings shows the editor setting as the source', shown and shown:find('editor settings', 1, true) ~= nil, shown)
vim.cmd.buffer(buf)

client:stop()
wait(5000, function()
  return client:is_stopped()
end)
finish()
