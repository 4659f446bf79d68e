-- s-code for Neovim: options, the client, and a Lua API for an embedded agent.
--
--   require('s_code').setup({ cmd = { 's-code', 'serve' }, permission_mode = 'manual' })
--   vim.lsp.enable('s_code')      -- or setup({ enable = true })
--   require('s_code').call('read_file', { path = 'README.md' }, function(err, result) end)
local methods = require('s_code.methods')

local M = {}

---@class s_code.Options
---@field cmd? string[] how to start the server (default { 's-code', 'serve' })
---@field permission_mode? 'manual'|'accept-edits'|'workspace'
---@field edit_application? 'auto'|'disk'|'editor'
---@field protected_paths? string[] extra gitignore-style patterns the agent may never write
---@field enable? boolean also `vim.lsp.enable('s_code')` (a plugin manager's `opts` is then all)
---@field save_before_run? boolean save buffers holding the agent's edits before a command or git
---  reads the disk (default true)

---@type s_code.Options
M.options = {}

--- Turn ids this session has seen (from apply_patch results and turn/begin), newest last.
---@type string[]
M.turns = {}

---@param opts? s_code.Options
function M.setup(opts)
  opts = opts or {}
  M.options = vim.tbl_deep_extend('force', M.options, opts)
  local config = { handlers = require('s_code.handlers').table(), init_options = {} }
  if opts.cmd then
    config.cmd = opts.cmd
  end
  if opts.permission_mode then
    config.init_options.permissionMode = opts.permission_mode
  end
  if opts.edit_application then
    config.init_options.editApplication = opts.edit_application
  end
  if opts.protected_paths then
    config.init_options.protectedPaths = opts.protected_paths
  end
  if opts.save_before_run ~= nil then
    config.capabilities = {
      experimental = { sCode = { saveDocuments = opts.save_before_run ~= false } },
    }
  end
  vim.lsp.config('s_code', config)
  if opts.enable then
    vim.lsp.enable('s_code')
  end
end

--- The s-code client that owns the current buffer; else the one whose workspace holds the
--- current directory; else the only one.
---@return vim.lsp.Client|nil
function M.client()
  local clients = vim.lsp.get_clients({ name = 's_code', bufnr = 0 })
  if #clients > 0 then
    return clients[1]
  end
  clients = vim.lsp.get_clients({ name = 's_code' })
  local cwd = vim.fs.normalize(vim.fn.getcwd())
  for _, client in ipairs(clients) do
    local root = client.root_dir and vim.fs.normalize(client.root_dir)
    if root and (cwd == root or vim.startswith(cwd, root .. '/')) then
      return client
    end
  end
  return #clients == 1 and clients[1] or nil
end

--- Lua's {} encodes as a JSON array: an empty table goes out as an object.
local function object(t)
  if t == nil or (type(t) == 'table' and next(t) == nil) then
    return vim.empty_dict()
  end
  return t
end

--- For a statusline: "s-code manual · tier 1 · 1 pending", or "" when s-code is not running.
---@return string
function M.statusline()
  local client = M.client()
  if client == nil then
    return ''
  end
  local caps = client.server_capabilities or {}
  local s_code = (caps.experimental or {}).sCode or {}
  local parts = { 's-code ' .. (M.mode or '…') }
  if s_code.sandboxTier then
    table.insert(parts, 'tier ' .. s_code.sandboxTier)
  end
  local pending = 0
  for _, e in ipairs((require('s_code.handlers').hosts or {}).entries or {}) do
    if e.state == 'pending' then
      pending = pending + 1
    end
  end
  if pending > 0 then
    table.insert(parts, pending .. ' pending')
  end
  return table.concat(parts, ' · ')
end

--- The permission mode, as the server last said (for the statusline).
---@type string|nil
M.mode = nil

local function remember_turn(turn)
  if type(turn) == 'string' and not vim.tbl_contains(M.turns, turn) then
    table.insert(M.turns, turn)
  end
end

--- Send an s-code request; `callback(err, result)` runs on the main loop.
---@param method string
---@param params table
---@param callback? fun(err: lsp.ResponseError|nil, result: any)
function M.request(method, params, callback)
  local client = M.client()
  if client == nil then
    local err = { code = -32002, message = 's-code is not running (vim.lsp.enable("s_code"))' }
    if callback then
      callback(err, nil)
    else
      vim.notify(err.message, vim.log.levels.ERROR)
    end
    return
  end
  -- no bufnr: pending changes of every buffer are flushed first, so the server reads what the
  -- user sees (with a bufnr, only that buffer's would be)
  client:request(method, object(params), function(err, result)
    if result and type(result) == 'table' then
      remember_turn(result.turn_id)
      if type(result.mode) == 'string' then
        M.mode = result.mode
      end
    end
    if callback then
      callback(err, result)
    elseif err then
      vim.notify('s-code: ' .. err.message, vim.log.levels.ERROR)
    end
  end)
end

--- Call a tool by name, as an embedded agent would.
---@param tool string
---@param args table
---@param callback fun(err: lsp.ResponseError|nil, result: any)
function M.call(tool, args, callback)
  M.request(methods.TOOLS_CALL, { name = tool, arguments = object(args) }, callback)
end

--- The same, waiting for the answer (for scripts and tests; blocks the UI up to `timeout_ms`).
---@return lsp.ResponseError|nil err, any result
function M.call_sync(tool, args, timeout_ms)
  local done, err, result = false, nil, nil
  M.call(tool, args, function(e, r)
    done, err, result = true, e, r
  end)
  vim.wait(timeout_ms or 20000, function()
    return done
  end, 10)
  if not done then
    return { code = -32800, message = 'timed out waiting for s-code' }, nil
  end
  return err, result
end

return M
