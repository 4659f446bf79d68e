-- Handlers for what the s-code server sends: approval prompts, approval details, the plan and
-- streamed command output. Server requests run in a coroutine, so a prompt waits on vim.ui.select.
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
      coroutine.resume(co, choice or vim.NIL)
    end)
  end)
  return coroutine.yield()
end

--- window/showDocument: approval details arrive as a read-only rendered card.
---@param params lsp.ShowDocumentParams
function M.show_document(_, params)
  local path = vim.uri_to_fname(params.uri)
  local buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  vim.bo[buf].readonly = true
  vim.bo[buf].modifiable = false
  vim.bo[buf].buftype = 'nofile'
  ui.show(buf)
  return { success = true }
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

--- s-code/commandOutput: output of a running command, appended as it arrives.
function M.command_output(_, params)
  ui.append('output', params.text or '')
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
    [methods.HOST_PROCESSES_UPDATED] = M.hosts_updated,
  }
end

return M
