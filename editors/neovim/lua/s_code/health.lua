-- :checkhealth s_code
local M = {}

function M.check()
  local health = vim.health
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
end

return M
