-- What lazy.nvim does with one plugin spec when it loads it at start-up, for the editor tests
-- (lazy.nvim itself cannot be fetched offline): the plugin directory is the spec's `dir` (with
-- `~` expanded) or, for an 'owner/repo' or `url` spec, <stdpath('data')>/lazy/<name or repo>,
-- where lazy.nvim clones it; that directory goes on 'runtimepath', its plugin/ scripts are sourced, and then
-- `config(plugin, opts)` runs.
local M = {}

function M.load(spec)
  local plugin = { name = spec.name }
  if spec.dir then
    plugin.dir = vim.fs.normalize(spec.dir)
  else
    local source = assert(spec[1] or spec.url, 'a spec needs dir, owner/repo or url')
    local repo = spec.name or source:match('[^/]+$'):gsub('%.git$', '')
    plugin.dir = vim.fs.joinpath(vim.fn.stdpath('data'), 'lazy', repo)
    plugin.name = plugin.name or repo
  end
  assert(vim.uv.fs_stat(plugin.dir), 'no plugin directory at ' .. plugin.dir)
  vim.opt.rtp:prepend(plugin.dir)
  for _, file in ipairs(vim.fn.glob(plugin.dir .. '/plugin/**/*.{vim,lua}', false, true)) do
    vim.cmd.source(vim.fn.fnameescape(file))
  end
  if spec.config then
    spec.config(plugin, spec.opts or {})
  end
end

return M
