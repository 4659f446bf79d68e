-- Scratch buffers: the plan, command output, previews and lists.
local M = {}

---@type table<string, integer>
local buffers = {}

--- The scratch buffer named `name` (created once, reused), optionally shown in a split.
---@param name string
---@return integer bufnr
function M.scratch(name)
  local buf = buffers[name]
  if buf == nil or not vim.api.nvim_buf_is_valid(buf) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = 'hide'
    vim.bo[buf].filetype = 'markdown'
    pcall(vim.api.nvim_buf_set_name, buf, 's-code://' .. name)
    buffers[name] = buf
  end
  return buf
end

---@param name string
---@param lines string[]
---@return integer bufnr
function M.set(name, lines)
  local buf = M.scratch(name)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  return buf
end

--- Append text (which may hold partial lines) to the end of a scratch buffer.
---@param name string
---@param text string
function M.append(name, text)
  local buf = M.scratch(name)
  vim.bo[buf].modifiable = true
  local last = vim.api.nvim_buf_line_count(buf)
  local tail = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] or ''
  local pieces = vim.split(tail .. text, '\n', { plain = true })
  vim.api.nvim_buf_set_lines(buf, last - 1, last, false, pieces)
  vim.bo[buf].modifiable = false
end

---@param buf integer
function M.show(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return
    end
  end
  vim.cmd('botright split')
  vim.api.nvim_win_set_buf(0, buf)
end

return M
