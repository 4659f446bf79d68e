-- The install samples of docs/editors/neovim.md in a headless Neovim: each loads the plugin the way
-- its plugin manager would, then s-code must attach to a buffer of the workspace and answer.
--
--   nvim --headless -u NONE -l install.lua <kind> <sample file> <clone dir> <workspace>
--
-- lazy.nvim itself is not installed (no registry carries it): `lazy_load` does what its loader
-- does for a plugin loaded at start-up (lazy/core/loader.lua): the plugin's directory (`dir`, or
-- the clone of a repository spec) on the runtimepath, its plugin/ files sourced, then
-- `config(plugin, opts)`, or `require(main).setup(opts)` with main found by lazy's rule.
local kind, sample_file, clone, ws = arg[1], arg[2], arg[3], arg[4]
vim.o.swapfile = false
vim.cmd('filetype on')

local function check(cond, msg)
  if not cond then
    error(msg, 2)
  end
end

-- lazy/core/util.lua normname, lazy/core/loader.lua get_main
local function normname(name)
  local out = name:lower():gsub('^n?vim%-', ''):gsub('%.n?vim$', ''):gsub('[%.%-]lua', '')
  return (out:gsub('[^a-z]+', ''))
end

local function get_main(plugin)
  if plugin.main then
    return plugin.main
  end
  local mods = {}
  for name, type in vim.fs.dir(plugin.dir .. '/lua') do
    local mod = type == 'directory' and name or name:match('^(.*)%.lua$')
    if mod then
      if normname(mod) == normname(plugin.name) then
        return mod
      end
      table.insert(mods, mod)
    end
  end
  return #mods == 1 and mods[1] or nil
end

local function lazy_load(spec)
  local plugin = vim.deepcopy(spec)
  plugin.dir = spec.dir and vim.fs.normalize(spec.dir) or clone
  plugin.name = spec.name or vim.fs.basename(spec.dir or spec[1])
  vim.opt.rtp:prepend(plugin.dir)
  for _, ext in ipairs({ 'vim', 'lua' }) do
    for _, file in ipairs(vim.fn.glob(plugin.dir .. '/plugin/**/*.' .. ext, false, true)) do
      vim.cmd.source(file)
    end
  end
  local opts = spec.opts or {}
  if type(spec.config) == 'function' then
    spec.config(plugin, opts)
  else
    local main = get_main(plugin)
    check(main == 's_code', 'lazy.nvim would take ' .. tostring(main) .. ' for the main module')
    require(main).setup(opts)
  end
end

local function run()
  local code = table.concat(vim.fn.readfile(sample_file), '\n')
  if kind:match('^lazy%.nvim') then
    lazy_load(assert(loadstring('return ' .. code))())
  elseif kind == 'vim.pack' and vim.pack == nil then
    return 'skip'
  else
    assert(loadstring(code))()
  end
  check(vim.fn.exists(':SCodeMode') == 2, 'plugin/s_code.lua was not loaded')
  local s_code = require('s_code')
  vim.cmd.edit(ws .. '/a.txt')
  local buf = vim.api.nvim_get_current_buf()
  local attached = vim.wait(20000, function()
    local c = s_code.client()
    return c ~= nil and c.initialized and vim.lsp.buf_is_attached(buf, c.id)
  end, 20)
  check(attached, 's-code did not attach (is it enabled?)')
  local err, result = s_code.call_sync('list_files', vim.empty_dict())
  check(err == nil, 'list_files: ' .. vim.inspect(err))
  check(vim.inspect(result):find('a.txt', 1, true), 'a.txt listed: ' .. vim.inspect(result))
  return 'ok'
end

local ok, out = xpcall(run, debug.traceback)
if ok and out == 'skip' then
  print('skip ' .. kind .. ': Neovim ' .. tostring(vim.version()) .. ' has no vim.pack')
elseif ok then
  print('ok ' .. kind)
else
  print('not ok ' .. kind .. ': ' .. tostring(out))
end
io.stdout:flush()
os.exit(ok and 0 or 1)
