--- canon.nvim: user commands over the canon-ls language server (see lsp/canon_ls.lua).
---
--- require('canon').setup({
---   enable = true,            -- vim.lsp.enable('canon_ls')
---   cmd = nil,                -- override the server command, e.g. { 'python', '-m', 'canon_ls' }
---   settings = {},            -- the `canon` settings section: root, mounts, surface, resurface,
---                             -- retrieval, standout (above canon.toml and settings.json),
---                             -- inlayHints, codeLens, staleness, assetDiagnostics
---   inlay_hints = true,       -- turn on inlay hints in buffers canon-ls attaches to
---   keymaps = false,          -- true for the defaults below, or a table { open = '<leader>co', ... }
--- })
local M = {}

M.name = 'canon_ls'

local default_keymaps = {
  open = '<leader>co',
  search = '<leader>cs',
  journal = '<leader>cj',
  map = '<leader>cm',
  status = '<leader>ci',
  history = '<leader>ch',
}

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = 'canon' })
end

--- The canon-ls client for a buffer (the current one by default), or any running one.
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  return vim.lsp.get_clients({ bufnr = bufnr, name = M.name })[1]
    or vim.lsp.get_clients({ name = M.name })[1]
end

--- Sends `workspace/executeCommand` to the buffer's canon-ls client; `on_result(result)` gets
--- the raw answer (nil for JSON null). `uri` (the buffer's) tells a multi-root server which
--- workspace folder this is about; the server strips it. Errors are notified.
local function request(command, argument, on_result, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    notify('canon-ls is not running for this buffer; see :checkhealth canon', vim.log.levels.WARN)
    return false
  end
  if vim.api.nvim_buf_get_name(bufnr) ~= '' and vim.bo[bufnr].buftype == '' and argument.uri == nil then
    argument = vim.tbl_extend('force', argument, { uri = vim.uri_from_bufnr(bufnr) })
  end
  client:exec_cmd({ title = command, command = command, arguments = { argument } }, { bufnr = bufnr },
    function(err, result)
      if err then
        notify(('%s failed: %s'):format(command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
        return
      end
      if on_result then
        on_result(result ~= vim.NIL and result or nil)
      end
    end)
  return true
end

--- Runs a server command (`canon.read`, `canon.journal`, ...) with its one argument, the
--- command's object (e.g. `{ path = 'src/a.ts' }`). `on_result(text)` gets the server's text.
function M.exec(command, argument, on_result, bufnr)
  return request(command, argument, function(result)
    if on_result then
      on_result(type(result) == 'string' and result or vim.inspect(result))
    end
  end, bufnr)
end

--- Asks the server what a buffer or an address is (`canon.resolve`): the address and its
--- governing article are the server's to decide, not the plugin's. `argument` is
--- `{ uri = … }`, `{ path = … }` or `{ address = … }`; `on_result` gets
--- `{ folder, kind, address, governing, article, exists }` (`article` a URI) or nil.
function M.resolve(argument, on_result, bufnr)
  return request('canon.resolve', argument, function(result)
    on_result(type(result) == 'table' and result or nil)
  end, bufnr)
end

--- The governing article of a buffer, through `canon.resolve`; `on_result(resolved or nil)`.
--- Returns false (and calls nothing) when the buffer has no file or no client.
function M.governing(bufnr, on_result)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.api.nvim_buf_get_name(bufnr) == '' then
    return false
  end
  return M.resolve({ uri = vim.uri_from_bufnr(bufnr) }, on_result, bufnr)
end

local function edit_uri(uri)
  vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(uri)))
end

--- Opens a scratch buffer with text (map, status, search results).
local function show(title, text)
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_name(buf, ('canon://%s/%d'):format(title, buf))
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'markdown'
end

--- Lets the user pick one `address: capsule` line and opens that article.
local function pick_article(title, text, bufnr)
  local items = {}
  for line in text:gmatch('[^\n]+') do
    local clean = vim.trim(line):gsub('^%d+[.)]%s+', ''):gsub('^[-*]%s+', '')
    local address, capsule = clean:match('^(%S-):%s+(.*)$')
    if address and address ~= '' then
      items[#items + 1] = { address = address, capsule = capsule }
    end
  end
  if #items == 0 then
    notify(vim.trim(text))
    return
  end
  vim.ui.select(items, {
    prompt = title,
    format_item = function(item)
      return item.address .. '  ' .. item.capsule
    end,
  }, function(item)
    if not item then
      return
    end
    M.resolve({ address = item.address }, function(r)
      if r and r.exists and r.governing == item.address and r.article then
        edit_uri(r.article)
      else
        M.exec('canon.read', { path = item.address }, function(out)
          show('read', out)
        end, bufnr)
      end
    end, bufnr)
  end)
end

--- :CanonOpen — open the governing article of the current buffer.
function M.open()
  if vim.api.nvim_buf_get_name(0) == '' then
    notify('canon: this buffer has no file', vim.log.levels.WARN)
    return
  end
  M.governing(nil, function(r)
    if not r or (r.kind ~= 'asset' and r.kind ~= 'article') then
      notify('canon has no article for this buffer', vim.log.levels.WARN)
    elseif r.exists and r.article then
      edit_uri(r.article)
    else
      notify(('No article governs %s yet; use the "Create article" code action.'):format(r.address))
    end
  end)
end

--- :CanonSearch [query] — canon.search, then pick a result.
function M.search(query)
  local bufnr = vim.api.nvim_get_current_buf()
  local function run(q)
    if not q or vim.trim(q) == '' then
      return
    end
    M.exec('canon.search', { query = q }, function(text)
      pick_article('canon search: ' .. q, text, bufnr)
    end, bufnr)
  end
  if query and query ~= '' then
    run(query)
  else
    vim.ui.input({ prompt = 'canon search: ' }, run)
  end
end

--- :CanonJournal [text] — canon.journal with the current buffer's governing address as subject.
function M.journal(body)
  local bufnr = vim.api.nvim_get_current_buf()
  local function ask(subject)
    local function run(text)
      if not text or vim.trim(text) == '' then
        return
      end
      local argument = { body = text }
      if subject then
        argument.subject = { subject }
      end
      M.exec('canon.journal', argument, function(out)
        notify(out)
      end, bufnr)
    end
    if body and body ~= '' then
      run(body)
    else
      vim.ui.input({ prompt = subject and ('journal about ' .. subject .. ': ') or 'journal: ' }, run)
    end
  end
  if vim.api.nvim_buf_get_name(bufnr) == '' then
    ask(nil) -- a buffer without a file: an entry about no subject
  else
    M.governing(bufnr, function(r)
      ask(r and (r.governing or (r.address ~= '' and r.address)) or nil)
    end)
  end
end

--- :CanonMap [prefix] — the store's map (one `address: capsule` line per article).
function M.map(prefix)
  local argument = (prefix and prefix ~= '') and { path = prefix } or vim.empty_dict()
  M.exec('canon.map', argument, function(text)
    show('map', text)
  end)
end

--- :CanonStatus — the server's status line.
function M.status()
  local name = vim.api.nvim_buf_get_name(0)
  local argument = name ~= '' and { path = name } or vim.empty_dict()
  M.exec('canon.status', argument, function(text)
    notify(text)
  end)
end

--- :CanonSettings — each of the six options, its value and where it comes from (these
--- settings, your settings.json, the project's canon.toml, the default): canon.settings.
function M.settings()
  local name = vim.api.nvim_buf_get_name(0)
  local argument = name ~= '' and { path = name } or vim.empty_dict()
  M.exec('canon.settings', argument, function(text)
    show('settings', text)
  end)
end

--- :CanonHistory[!] — the history of the governing article (canon.history): commits of the
--- article and of its files around the date it was updated, then the journal; with ! only
--- what came after that date. The diff since then: the "Show changes since …" code action.
function M.history(since_updated)
  local bufnr = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    notify('open a file of the project first', vim.log.levels.WARN)
    return
  end
  local argument = { path = name, sinceUpdated = since_updated and true or nil }
  M.exec('canon.history', argument, function(text)
    show('history', text)
  end, bufnr)
end

local function create_commands()
  local function cmd(name, fn, opts)
    vim.api.nvim_create_user_command(name, fn, vim.tbl_extend('force', { force = true }, opts))
  end
  cmd('CanonOpen', function()
    M.open()
  end, { desc = 'canon: open the governing article' })
  cmd('CanonSearch', function(a)
    M.search(a.args)
  end, { nargs = '*', desc = 'canon: search articles' })
  cmd('CanonJournal', function(a)
    M.journal(a.args)
  end, { nargs = '*', desc = 'canon: new journal entry about this file' })
  cmd('CanonMap', function(a)
    M.map(a.args)
  end, { nargs = '?', desc = 'canon: map of the store' })
  cmd('CanonStatus', function()
    M.status()
  end, { desc = 'canon: status' })
  cmd('CanonSettings', function()
    M.settings()
  end, { desc = 'canon: the options, their values and where they come from' })
  cmd('CanonHistory', function(a)
    M.history(a.bang)
  end, { bang = true, desc = 'canon: history of the governing article (! since it was updated)' })
end

local function set_keymaps(keymaps)
  if keymaps == true then
    keymaps = default_keymaps
  end
  if type(keymaps) ~= 'table' then
    return
  end
  local actions = {
    open = M.open,
    search = M.search,
    journal = M.journal,
    map = M.map,
    status = M.status,
    history = M.history,
  }
  for action, lhs in pairs(keymaps) do
    if actions[action] and lhs then
      vim.keymap.set('n', lhs, function()
        actions[action]()
      end, { desc = 'canon: ' .. action })
    end
  end
end

function M.setup(opts)
  opts = opts or {}
  local override = {}
  if opts.cmd then
    override.cmd = opts.cmd
  end
  if opts.settings then
    override.settings = { canon = opts.settings }
  end
  if next(override) then
    vim.lsp.config(M.name, override)
  end
  create_commands()
  set_keymaps(opts.keymaps)

  local group = vim.api.nvim_create_augroup('canon', { clear = true })
  if opts.inlay_hints ~= false then
    vim.api.nvim_create_autocmd('LspAttach', {
      group = group,
      callback = function(ev)
        local client = vim.lsp.get_client_by_id(ev.data.client_id)
        if client and client.name == M.name and client:supports_method('textDocument/inlayHint') then
          vim.lsp.inlay_hint.enable(true, { bufnr = ev.buf })
        end
      end,
    })
  end
  if opts.enable ~= false then
    vim.lsp.enable(M.name)
    -- vim.lsp.enable starts on FileType; files without a filetype are governed too.
    vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
      group = group,
      callback = function(ev)
        vim.schedule(function()
          if vim.api.nvim_buf_is_valid(ev.buf) and vim.bo[ev.buf].filetype == ''
            and vim.bo[ev.buf].buftype == '' then
            local config = vim.lsp.config[M.name]
            if config and type(config.cmd) == 'table' and vim.fn.executable(config.cmd[1]) == 1 then
              local start = vim.deepcopy(config)
              start.root_dir = vim.fs.root(ev.buf, config.root_markers or { '.canon', '.git' })
              vim.lsp.start(start, { bufnr = ev.buf })
            end
          end
        end)
      end,
    })
  end
end

return M
