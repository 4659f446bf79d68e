-- :checkhealth s_code
local methods = require('s_code.methods')

local M = {}

--- The sidecar's agent link (s-code/agents/list), asked before doctor runs: doctor attaches to
--- the link for a moment itself, and would be listed.
---@param client vim.lsp.Client|nil
---@return table|nil view, string|nil problem
local function agent_view(client)
  if client == nil then
    return nil, nil
  end
  local reply, reason = client:request_sync(methods.AGENTS_LIST, vim.empty_dict(), 5000)
  if reply == nil then
    return nil, 'no answer (' .. tostring(reason or 'the server stopped') .. ')'
  end
  if reply.err then
    return nil, reply.err.message
  end
  return reply.result, nil
end

---@param health table vim.health
---@param view table|nil
---@param problem string|nil
local function report_agents(health, view, problem)
  health.start('s-code agents (s-code mcp attached to this session)')
  if view == nil then
    if problem then
      health.warn('could not ask the server for its agent link: ' .. problem)
    else
      health.info('agent socket: s-code is not running in this session')
    end
    return
  end
  if view.socket == nil or view.socket == vim.NIL then
    health.warn('agent socket: none: agents cannot attach to this session')
  else
    health.ok('agent socket: ' .. view.socket)
  end
  for _, line in ipairs(view.problems or {}) do
    health.warn(line)
  end
  local names = {}
  for _, a in ipairs(view.agents or {}) do
    table.insert(names, (a.name == nil or a.name == '') and ('(no call yet) ' .. a.id) or a.name)
  end
  if #names > 0 then
    health.ok('agents attached: ' .. table.concat(names, ', '))
  else
    health.info('agents attached: none (an agent runs `s-code mcp --workspace DIR`; :SCodeAgents)')
  end
end

function M.check()
  local health = vim.health
  local client = vim.lsp.get_clients({ name = 's_code' })[1]
  local ok_view, view, problem = pcall(agent_view, require('s_code').client() or client)
  if not ok_view then
    view, problem = nil, tostring(view)
  end
  health.start('s-code')
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.11 or newer is needed (vim.lsp.config / vim.lsp.enable)')
  end
  local config = vim.lsp.config.s_code
  local cmd = config and config.cmd or { 's-code', 'serve' }
  if type(cmd) ~= 'table' or vim.fn.executable(cmd[1]) ~= 1 then
    health.error(('server not found: %s'):format(vim.inspect(cmd)), {
      'pip install s-code, or set require("s_code").setup({ cmd = { ... } })',
    })
    return
  end
  health.ok('server command: ' .. table.concat(cmd, ' '))
  -- the same program, asked for its version and its sandbox tier (doctor runs the self-test)
  local base = vim.list_slice(cmd, 1, #cmd - 1)
  local version = vim.system(vim.list_extend(vim.deepcopy(base), { '--version' }), { text = true }):wait()
  if version.code == 0 then
    health.ok('version: ' .. vim.trim(version.stdout))
  else
    health.warn('could not ask the server for its version: ' .. vim.trim(version.stderr or ''))
  end
  local doctor = vim.system(vim.list_extend(vim.deepcopy(base), { 'doctor', '--json' }), { text = true }):wait()
  local ok, report = pcall(vim.json.decode, doctor.stdout or '')
  if doctor.code == 0 and ok and type(report) == 'table' and report.sandbox then
    local box = report.sandbox
    local line = ('sandbox: tier %d (%s)'):format(box.tier, box.label)
    if box.tier == 3 then
      health.warn(line .. ': every command asks', box.reasons)
    else
      health.ok(line)
    end
  else
    health.warn('could not run `doctor --json`')
  end
  local clients = vim.lsp.get_clients({ name = 's_code' })
  if #clients > 0 then
    local info = clients[1].server_info or {}
    health.ok(('running: %s %s'):format(info.name or '?', info.version or '?'))
  else
    health.info('not running in this session (vim.lsp.enable("s_code") starts it in a workspace)')
  end
  report_agents(health, view, problem)
end

return M
