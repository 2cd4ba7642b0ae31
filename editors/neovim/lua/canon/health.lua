--- :checkhealth canon — is Neovim new enough, is the server installed, is it attached here?
local M = {}

function M.check()
  local health = vim.health
  health.start('canon')

  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.11 or newer is needed (vim.lsp.config / vim.lsp.enable)')
  end

  local config = vim.lsp.config.canon_ls
  if not config then
    health.error("no 'canon_ls' config: put editors/neovim on 'runtimepath' (it holds lsp/canon_ls.lua)")
    return
  end
  local cmd = type(config.cmd) == 'table' and config.cmd or nil
  if not cmd then
    health.info('server command is a function; not checked')
  elseif vim.fn.executable(cmd[1]) == 1 then
    health.ok(('server command: %s (%s)'):format(table.concat(cmd, ' '), vim.fn.exepath(cmd[1])))
  else
    health.error(('%s is not executable'):format(cmd[1]), {
      'pipx install /path/to/a/clone/of/canon-ls (see its README, Install)',
      "or require('canon').setup({ cmd = { '/path/to/python', '-m', 'canon_ls' } })",
    })
  end

  if vim.lsp.is_enabled and vim.lsp.is_enabled('canon_ls') then
    health.ok("vim.lsp.enable('canon_ls') is on")
  else
    health.warn("canon_ls is not enabled", { "call require('canon').setup() or vim.lsp.enable('canon_ls')" })
  end

  local clients = vim.lsp.get_clients({ name = 'canon_ls' })
  if #clients == 0 then
    health.info('no canon-ls client is running (it starts when you open a file)')
  end
  for _, client in ipairs(clients) do
    local root = client.root_dir or '(no root)'
    local store = client.root_dir and vim.uv.fs_stat(vim.fs.joinpath(client.root_dir, '.canon'))
    local msg = ('client %d: root %s, %d buffer(s)'):format(client.id, root,
      vim.tbl_count(client.attached_buffers))
    if store then
      health.ok(msg .. ', store .canon/ found')
    else
      health.warn(msg .. ', no .canon/ store here yet', {
        'the store is created by the first write or journal entry ("Create article" code action)',
      })
    end
  end
end

return M
