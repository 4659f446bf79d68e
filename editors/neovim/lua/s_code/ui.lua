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

--- Show `buf` in a window: the one already showing it, else a new split at the bottom.
---@param buf integer
---@param opts? { focus?: boolean, height?: integer } focus: move the cursor there (default true)
---@return integer win
function M.show(buf, opts)
  opts = opts or {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      return win
    end
  end
  local from = vim.api.nvim_get_current_win()
  vim.cmd('botright split')
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  if opts.height then
    vim.api.nvim_win_set_height(win, opts.height)
  end
  if opts.focus == false and vim.api.nvim_win_is_valid(from) then
    vim.api.nvim_set_current_win(from)
  end
  return win
end

--- Close every window showing the scratch buffer `name` (the buffer stays, for next time).
---@param name string
function M.close(name)
  local buf = buffers[name]
  if buf == nil then
    return
  end
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, true)
    end
  end
end

--- Keep the windows showing `name` scrolled to its end (an output view that follows).
---@param name string
function M.follow(name)
  local buf = buffers[name]
  if buf == nil then
    return
  end
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(win) == buf then
      vim.api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
end

return M
