-- User commands: :SCodeMode, :SCodeUndoTurn, :SCodePlan, :SCodeSandboxPreview, :SCodeTools.
local methods = require('s_code.methods')
local ui = require('s_code.ui')

local M = {}

local function s_code()
  return require('s_code')
end

local function show(name, lines)
  ui.show(ui.set(name, lines))
end

function M.mode(opts)
  local mode = opts.fargs[1]
  if mode == nil then
    s_code().request(methods.PERMISSION_MODE_GET, vim.empty_dict(), function(err, result)
      if not err then
        vim.notify('s-code: permission mode ' .. result.mode)
      end
    end)
    return
  end
  s_code().request(methods.PERMISSION_MODE_SET, { mode = mode }, function(err, result)
    if err then
      vim.notify('s-code: ' .. err.message, vim.log.levels.ERROR)
    else
      vim.notify('s-code: permission mode ' .. result.mode)
    end
  end)
end

function M.undo_turn(opts)
  local turns = s_code().turns
  local turn = opts.fargs[1] or turns[#turns]
  if turn == nil then
    vim.notify('s-code: no turn to undo', vim.log.levels.WARN)
    return
  end
  s_code().request(methods.TURN_UNDO, { turnId = turn }, function(err, result)
    if err then
      vim.notify('s-code: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    for i, t in ipairs(turns) do
      if t == turn then
        table.remove(turns, i)
        break
      end
    end
    local refused = {}
    for _, r in ipairs(result.refused or {}) do
      table.insert(refused, r.path .. ' (' .. r.reason .. ')')
    end
    vim.cmd('checktime')
    vim.notify(
      ('s-code: undid %s: restored %d file(s)%s'):format(
        turn,
        #(result.restored or {}),
        #refused > 0 and ('; refused ' .. table.concat(refused, ', ')) or ''
      )
    )
  end)
end

function M.plan()
  ui.show(ui.scratch('plan'))
end

function M.sandbox_preview(opts)
  if #opts.fargs == 0 then
    vim.notify('s-code: :SCodeSandboxPreview {command} [args...]', vim.log.levels.WARN)
    return
  end
  s_code().request(methods.SANDBOX_PREVIEW, { command = opts.fargs }, function(err, r)
    if err then
      vim.notify('s-code: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    -- the server's rendering of the card, as every face shows it, then what this mode decides
    local lines = vim.split(r.card.text, '\n', { plain = true })
    table.insert(lines, 'decision in this mode: ' .. r.decision)
    show('sandbox', lines)
  end)
end

function M.tools()
  s_code().request(methods.TOOLS_LIST, vim.empty_dict(), function(err, r)
    if err then
      vim.notify('s-code: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    local lines = { '# s-code tools', '' }
    for _, tool in ipairs(r.tools) do
      table.insert(lines, ('- %s: %s'):format(tool.name, tool.description))
    end
    show('tools', lines)
  end)
end

function M.register()
  local create = vim.api.nvim_create_user_command
  create('SCodeMode', M.mode, {
    nargs = '?',
    desc = 's-code: show or set the permission mode',
    complete = function()
      return methods.MODES
    end,
  })
  create('SCodeUndoTurn', M.undo_turn, {
    nargs = '?',
    desc = "s-code: undo a turn's edits (the latest by default)",
    complete = function()
      return vim.fn.reverse(vim.deepcopy(s_code().turns))
    end,
  })
  create('SCodePlan', M.plan, { desc = "s-code: show the agent's plan" })
  create('SCodeSandboxPreview', M.sandbox_preview, {
    nargs = '+',
    complete = 'shellcmd',
    desc = 's-code: show the sandbox a command would run in',
  })
  create('SCodeTools', M.tools, { desc = 's-code: list the tools' })
end

return M
