-- User commands: :SCodeMode, :SCodeUndoTurn, :SCodePlan, :SCodeSandboxPreview, :SCodeTools,
-- :SCodeHostProcesses, :SCodeApprove, :SCodeRevoke, :SCodeTerminals, :SCodeAgents.
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

--- "t-1a2b  3 files: a.py, b.py, c.py  (14:02)"
local function turn_label(t)
  local files = t.files or {}
  local shown = table.concat(vim.list_slice(files, 1, 3), ', ')
  if #files > 3 then
    shown = shown .. ', …'
  end
  return ('%s  %d file%s: %s  (%s)'):format(
    t.turnId,
    #files,
    #files == 1 and '' or 's',
    shown,
    os.date('%H:%M', math.floor(t.beganAt or 0))
  )
end

--- :SCodeUndoTurn [id]: with no id, pick from the server's recent turns (kept across restarts).
function M.undo_turn(opts)
  if opts.fargs[1] then
    return M.undo(opts.fargs[1])
  end
  s_code().request(methods.TURN_LIST, vim.empty_dict(), function(err, result)
    if err then
      vim.notify('s-code: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    local turns = vim.tbl_filter(function(t)
      return not t.undone
    end, result.turns or {})
    if #turns == 0 then
      vim.notify('s-code: no turn to undo', vim.log.levels.WARN)
      return
    end
    vim.ui.select(turns, { prompt = 'Undo which turn?', format_item = turn_label }, function(t)
      if t then
        M.undo(t.turnId)
      end
    end)
  end)
end

function M.undo(turn)
  local turns = s_code().turns
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

--- :SCodePlan: the plan buffer; after a restart the plan comes from the server.
function M.plan()
  local handlers = require('s_code.handlers')
  if handlers.plan ~= nil then
    ui.show(ui.scratch('plan'))
    return
  end
  s_code().request(methods.PLAN_GET, vim.empty_dict(), function(err, plan)
    if err then
      vim.notify('s-code: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    handlers.plan_updated(nil, plan)
    ui.show(ui.scratch('plan'))
  end)
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

--- Lines for the host-process list: one per entry, with its state and what needs the user.
---@param view table the result of s-code/hostProcesses/list (or the updated notification)
---@return string[]
function M.host_lines(view)
  local lines = { '# s-code host processes (they run outside the sandbox, with your access)', '' }
  for _, e in ipairs(view.entries or {}) do
    table.insert(lines, ('- %s %s (%s layer): %s'):format(e.kind, e.name, e.layer, e.state))
    if e.state == 'pending' then
      table.insert(lines, ('    not running until approved: :SCodeApprove %s'):format(e.name))
    end
    if e.error then
      table.insert(lines, '    error: ' .. e.error)
    end
    for _, t in ipairs(e.tools or {}) do
      table.insert(lines, '    tool ' .. t)
    end
    if e.toolsPendingApproval and #e.toolsPendingApproval > 0 then
      table.insert(
        lines,
        '    changed since approval (hidden): ' .. table.concat(e.toolsPendingApproval, ', ')
      )
    end
  end
  if #(view.entries or {}) == 0 then
    table.insert(lines, '(none configured: ~/.config/s-code/mcp.json, .s-code/mcp.json)')
  end
  return lines
end

function M.host_processes()
  s_code().request(methods.HOST_PROCESSES_LIST, vim.empty_dict(), function(err, view)
    if err then
      vim.notify('s-code: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    show('host-processes', M.host_lines(view))
  end)
end

--- The kind of the host process named `name` as last listed (an MCP server unless it is a hook
--- or a terminal).
local function kind_of(name)
  local hosts = require('s_code.handlers').hosts
  for _, e in ipairs(hosts and hosts.entries or {}) do
    if e.name == name then
      return e.kind
    end
  end
  return 'mcp'
end

local function host_action(method, verb)
  return function(opts)
    local name = opts.fargs[1]
    s_code().request(method, { kind = kind_of(name), name = name }, function(err)
      if err then
        vim.notify('s-code: ' .. err.message, vim.log.levels.ERROR)
      else
        vim.notify(('s-code: %s %s'):format(verb, name))
      end
    end)
  end
end

M.approve = host_action(methods.HOST_PROCESSES_APPROVE, 'approved')
M.revoke = host_action(methods.HOST_PROCESSES_REVOKE, 'revoked')

--- :SCodeTerminals: pick a background terminal, then show its output or kill it (its whole
--- process tree; the answer comes once it is gone).
function M.terminals()
  local call = { name = 'terminal_list', arguments = vim.empty_dict() }
  s_code().request(methods.TOOLS_CALL, call, function(err, r)
    if err then
      vim.notify('s-code: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    if #r.terminals == 0 then
      vim.notify('s-code: no background terminals in this session')
      return
    end
    vim.ui.select(r.terminals, {
      prompt = 's-code terminals (they run outside the sandbox, with your access)',
      format_item = function(t)
        local how = t.state
        if t.exit then
          how = t.exit.signal and ('killed by ' .. t.exit.signal) or ('exit ' .. tostring(t.exit.code))
        end
        return ('%s  %s  %s'):format(t.terminal_id, how, table.concat(t.command, ' '))
      end,
    }, function(t)
      if not t then
        return
      end
      local actions = t.state == 'running' and { 'Show output', 'Kill' } or { 'Show output' }
      vim.ui.select(actions, { prompt = t.terminal_id }, function(action)
        if action == 'Show output' then
          require('s_code.ui').show(require('s_code.ui').scratch('terminal-' .. t.terminal_id))
        elseif action == 'Kill' then
          local target = { kind = 'terminal', name = t.terminal_id }
          s_code().request(methods.HOST_PROCESSES_REVOKE, target, function(kerr)
            if kerr then
              vim.notify('s-code: ' .. kerr.message, vim.log.levels.ERROR)
            else
              vim.notify('s-code: killed ' .. t.terminal_id)
            end
          end)
        end
      end)
    end)
  end)
end

--- Lines for the agent link: the socket agents (`s-code mcp`) attach to, and who is attached.
---@param view table the result of s-code/agents/list
---@return string[]
function M.agent_lines(view)
  local lines = { '# s-code agents (attached over MCP: their calls are asked about here)', '' }
  if view.socket ~= nil and view.socket ~= vim.NIL then
    table.insert(lines, 'agent socket: ' .. view.socket)
  else
    table.insert(lines, 'agent socket: none (agents cannot attach to this session)')
  end
  for _, folder in ipairs(view.folders or {}) do
    table.insert(lines, 'serves: ' .. folder)
  end
  for _, problem in ipairs(view.problems or {}) do
    table.insert(lines, 'problem: ' .. problem)
  end
  table.insert(lines, '')
  for _, a in ipairs(view.agents or {}) do
    local name = (a.name == nil or a.name == '') and '(no call yet)' or a.name
    table.insert(lines, ('- %s  (%s)'):format(name, a.id))
  end
  if #(view.agents or {}) == 0 then
    table.insert(lines, '(no agent attached: an agent runs `s-code mcp --workspace DIR`)')
  end
  return lines
end

--- :SCodeAgents: the agent socket and the agents attached now.
function M.agents()
  s_code().request(methods.AGENTS_LIST, vim.empty_dict(), function(err, view)
    if err then
      vim.notify('s-code: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    show('agents', M.agent_lines(view))
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
    desc = "s-code: undo a turn's edits (pick from the recent turns)",
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
  create('SCodeHostProcesses', M.host_processes, {
    desc = 's-code: list MCP servers and other host processes, with their state',
  })
  create('SCodeApprove', M.approve, {
    nargs = 1,
    desc = 's-code: preview and trust a host process (it runs with your access)',
  })
  create('SCodeRevoke', M.revoke, { nargs = 1, desc = 's-code: revoke a host process' })
  create('SCodeTerminals', M.terminals, { desc = 's-code: list background terminals, show or kill' })
  create('SCodeAgents', M.agents, {
    desc = 's-code: the agent socket and the agents (s-code mcp) attached to this session',
  })
end

return M
