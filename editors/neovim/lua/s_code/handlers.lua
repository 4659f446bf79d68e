-- Handlers for what the s-code server sends: approval prompts, approval details, the plan,
-- streamed command output and code mode's child calls. Server requests run in a coroutine, so a
-- prompt waits on vim.ui.select.
local methods = require('s_code.methods')
local ui = require('s_code.ui')

local M = {}

--- window/showMessageRequest: the approval question, answered through vim.ui.select.
--- Dismissal (or any failure) returns vim.NIL, which the server takes as "deny".
---@param params lsp.ShowMessageRequestParams
function M.show_message_request(_, params)
  local actions = params.actions or {}
  local co, is_main = coroutine.running()
  if not co or is_main then
    return vim.NIL -- not inside a request coroutine: never block, never approve
  end
  vim.ui.select(actions, {
    kind = 's_code_approval',
    prompt = params.message,
    format_item = function(action)
      return action.title
    end,
  }, function(choice)
    vim.schedule(function()
      if not (choice and choice.title == 'Show details') then
        ui.close('card') -- decided: the details window goes away (shown again: asked again)
      end
      coroutine.resume(co, choice or vim.NIL)
    end)
  end)
  return coroutine.yield()
end

--- window/showDocument: approval details arrive as a rendered card. It is read into the one
--- "card" scratch buffer (reused, never a file buffer: no second server attaches to it) and
--- shown in one window, closed after the decision.
---@param params lsp.ShowDocumentParams
function M.show_document(_, params)
  local ok, lines = pcall(vim.fn.readfile, vim.uri_to_fname(params.uri))
  if not ok then
    return { success = false }
  end
  M.card_path = vim.uri_to_fname(params.uri)
  ui.show(ui.set('card', lines), { focus = false })
  return { success = true }
end

--- s-code/documents/save: save the buffers holding the agent's edits before a command or git
--- reads the disk (what `:write` does, so the server also hears didSave).
function M.documents_save(_, params)
  local saved = {}
  for _, uri in ipairs((params or {}).uris or {}) do
    local buf = vim.uri_to_bufnr(uri)
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
      local ok = pcall(vim.api.nvim_buf_call, buf, function()
        vim.cmd('silent write')
      end)
      if ok then
        table.insert(saved, uri)
      end
    end
  end
  return { saved = saved }
end

M.plan = nil ---@type table|nil

--- s-code/planUpdated: the plan, shown in the "plan" scratch buffer.
function M.plan_updated(_, params)
  M.plan = params
  local marks = { pending = '[ ]', in_progress = '[~]', completed = '[x]' }
  local lines = { '# s-code plan', '' }
  if params.explanation then
    table.insert(lines, params.explanation)
    table.insert(lines, '')
  end
  for i, step in ipairs(params.plan or {}) do
    table.insert(lines, string.format('%d. %s %s', i, marks[step.status] or '[?]', step.step))
  end
  ui.set('plan', lines)
end

--- s-code/commandOutput: output of a running command, appended as it arrives, in a window that
--- follows it (opened without taking the cursor).
function M.command_output(_, params)
  ui.append('output', params.text or '')
  ui.follow('output')
end

--- s-code/commandStatus: a header when a command starts (the output view opens), an exit line
--- when it ends.
function M.command_status(_, params)
  local text
  if params.state == 'running' then
    ui.show(ui.scratch('output'), { focus = false, height = 12 })
    text = ('\n$ %s    (in %s, %s)\n'):format(table.concat(params.argv or {}, ' '), params.cwd or '.', params.commandId or '')
  elseif params.state == 'exited' then
    local how = params.timedOut and 'timed out' or ('exit ' .. tostring(params.exitCode))
    text = ('[%s, %d ms]\n'):format(how, params.durationMs or 0)
  else
    text = '[could not run]\n'
  end
  local buf = ui.scratch('output')
  local last = vim.api.nvim_buf_get_lines(buf, -2, -1, false)[1] or ''
  ui.append('output', (last ~= '' and '\n' or '') .. text)
  ui.follow('output')
end

---@type table<string, boolean>
local runs_seen = {}

--- s-code/codeMode/toolCall: each child call of a code_mode run, nested under the run in the
--- output buffer (one line when it starts, one when it ends).
function M.code_mode_tool_call(_, params)
  local lines = {}
  if not runs_seen[params.runId] then
    runs_seen[params.runId] = true
    table.insert(lines, string.format('code_mode %s', params.runId))
  end
  local n = tostring(params.callId or ''):match('%.(%d+)$') or '?'
  local args = vim.json.encode(params.arguments or vim.empty_dict())
  if #args > 120 then
    args = args:sub(1, 117) .. '...'
  end
  if params.status == 'running' then
    table.insert(lines, string.format('  %s. %s %s', n, params.name, args))
  else
    local ms = params.durationMs or 0
    table.insert(lines, string.format('  %s. %s %s (%d ms)', n, params.name, params.status, ms))
  end
  ui.append('output', table.concat(lines, '\n') .. '\n')
end

--- s-code/terminalOutput: a background terminal's output, appended to its own buffer
--- (s-code://terminal-<id>), which windows showing it follow; the first output opens it.
function M.terminal_output(_, params)
  local name = 'terminal-' .. params.terminalId
  local fresh = vim.api.nvim_buf_line_count(ui.scratch(name)) == 1
    and (vim.api.nvim_buf_get_lines(ui.scratch(name), 0, 1, false)[1] or '') == ''
  ui.append(name, (params.text or ''):gsub('\r\n', '\n'):gsub('\r', ''))
  if fresh then
    ui.show(ui.scratch(name), { focus = false, height = 10 })
  end
  ui.follow(name)
end

M.hosts = nil ---@type table|nil

--- s-code/hostProcesses/updated: the list kept current (the statusline counts what is pending).
function M.hosts_updated(_, params)
  M.hosts = params
  local buf = ui.scratch('host-processes')
  if vim.api.nvim_buf_is_valid(buf) and vim.api.nvim_buf_line_count(buf) > 1 then
    ui.set('host-processes', require('s_code.commands').host_lines(params))
  end
end

--- The handlers table for vim.lsp.config.
---@return table<string, function>
function M.table()
  return {
    ['window/showMessageRequest'] = M.show_message_request,
    ['window/showDocument'] = M.show_document,
    [methods.PLAN_UPDATED] = M.plan_updated,
    [methods.COMMAND_OUTPUT] = M.command_output,
    [methods.COMMAND_STATUS] = M.command_status,
    [methods.DOCUMENTS_SAVE] = M.documents_save,
    [methods.CODE_MODE_TOOL_CALL] = M.code_mode_tool_call,
    [methods.HOST_PROCESSES_UPDATED] = M.hosts_updated,
    [methods.TERMINAL_OUTPUT] = M.terminal_output,
  }
end

return M
