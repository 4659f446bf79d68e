-- Headless Neovim tests of the s-code plugin against the real server. No test framework: each case
-- is a function; the runner prints "ok <name>" or "not ok <name>: <reason>" and exits 0 or 1.
--
--   nvim --headless -u NONE -l run.lua <plugin dir> <python> <workspace> <case>
local plugin, python, ws, case = arg[1], arg[2], arg[3], arg[4]
vim.opt.rtp:prepend(plugin)
vim.cmd('filetype on')
vim.cmd('runtime plugin/s_code.lua')
vim.o.swapfile = false

local s_code = require('s_code')
s_code.setup({ cmd = { python, '-m', 's_code', 'serve' }, permission_mode = 'manual' })
vim.lsp.enable('s_code')

-- The user at the prompt: answers queued by each case; nil dismisses.
-- A title picks that action; a number picks that item of any list (the turn picker).
local answers, prompts, offered = {}, {}, {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(prompts, opts.prompt)
  local labels = {}
  for _, item in ipairs(items) do
    table.insert(labels, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(offered, labels)
  local want = table.remove(answers, 1)
  if type(want) == 'number' then
    return on_choice(items[want])
  end
  for _, item in ipairs(items) do
    if want ~= nil and item.title == want then
      return on_choice(item)
    end
  end
  on_choice(nil)
end

local function check(cond, msg)
  if not cond then
    error(msg, 2)
  end
end

local function eq(a, b, what)
  if not vim.deep_equal(a, b) then
    error(('%s: expected %s, got %s'):format(what, vim.inspect(b), vim.inspect(a)), 2)
  end
end

local function open(rel)
  vim.cmd.edit(ws .. '/' .. rel)
  local buf = vim.api.nvim_get_current_buf()
  local ok = vim.wait(20000, function()
    local c = s_code.client()
    return c ~= nil and c.initialized and vim.lsp.buf_is_attached(buf, c.id)
  end, 20)
  check(ok, 's-code did not attach to ' .. rel)
  return buf
end

local function lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function disk(rel)
  return vim.fn.readfile(ws .. '/' .. rel)
end

local function kind(err)
  return err and err.data and err.data.kind
end

local function read(rel)
  local err, result = s_code.call_sync('read_file', { path = rel })
  check(err == nil, 'read_file failed: ' .. vim.inspect(err))
  return result
end

local function edit_line(rel, revision, line, text)
  return s_code.call_sync('apply_patch', {
    files = {
      { path = rel, expected_revision = revision, edits = { { start_line = line, end_line = line, new_text = text } } },
    },
  })
end

local cases = {}

function cases.reads_the_unsaved_buffer()
  local buf = open('a.txt')
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { 'typed, not saved' })
  local r = read('a.txt')
  eq(r.source, 'buffer', 'source')
  check(r.numbered_content:find('typed, not saved', 1, true), 'the buffer text is read')
  local text = table.concat(lines(buf), '\n') .. '\n'
  eq(r.sha256, vim.fn.sha256(text), 'sha256 of the buffer text')
  eq(r.revision, r.sha256:sub(1, 16), 'revision')
  eq(disk('a.txt'), { 'one', 'two', 'three' }, 'disk untouched')
end

function cases.patch_lands_in_the_buffer_after_approval()
  local buf = open('a.txt')
  vim.api.nvim_buf_set_lines(buf, 2, 3, false, { 'user typed this' })
  vim.o.undolevels = vim.o.undolevels -- the user's typing is its own undo step
  local r = read('a.txt')
  answers = { 'Approve once' }
  local err, result = edit_line('a.txt', r.revision, 1, 'ONE')
  check(err == nil, 'apply_patch failed: ' .. vim.inspect(err))
  eq(#prompts, 1, 'prompts shown')
  check(prompts[1]:find('Edit a.txt', 1, true), 'prompt names the file: ' .. prompts[1])
  check(#prompts[1] < 200, 'prompt is compact')
  eq(result.applied[1].via, 'editor', 'applied through the editor')
  eq(lines(buf), { 'ONE', 'two', 'user typed this' }, 'buffer')
  check(vim.bo[buf].modified, 'the buffer stays modified (unsaved)')
  eq(disk('a.txt'), { 'one', 'two', 'three' }, 'disk untouched')
  vim.cmd('silent undo')
  eq(lines(buf)[1], 'one', 'u undoes the agent edit')
  eq(lines(buf)[3], 'user typed this', "the user's text survives the undo")
end

function cases.stale_revision_after_typing_is_refused()
  local buf = open('a.txt')
  local r = read('a.txt')
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { 'the user got there first' })
  answers = { 'Approve once' }
  local err = edit_line('a.txt', r.revision, 1, 'AGENT')
  eq(kind(err), 'stale_revision', 'error kind')
  eq(#prompts, 0, 'nothing was asked')
  eq(lines(buf)[1], 'the user got there first', "the user's text survives")
end

function cases.dismissal_denies()
  local buf = open('a.txt')
  local r = read('a.txt')
  answers = {} -- the user closes the picker
  local err = edit_line('a.txt', r.revision, 1, 'AGENT')
  eq(kind(err), 'approval_denied', 'error kind')
  eq(#prompts, 1, 'asked once')
  eq(lines(buf), { 'one', 'two', 'three' }, 'buffer unchanged')
end

function cases.show_details_opens_the_card_read_only()
  open('a.txt')
  answers = { 'Show details', 'Deny' }
  local err = s_code.call_sync('apply_patch', {
    files = {
      { path = 'n1.txt', expected_revision = vim.NIL, content = 'x\n' },
      { path = 'n2.txt', expected_revision = vim.NIL, content = 'y\n' },
    },
  })
  eq(kind(err), 'approval_denied', 'denied after reading the details')
  eq(#prompts, 2, 'asked again after the details')
  local card = require('s_code.ui').scratch('card')
  local text = table.concat(lines(card), '\n')
  check(text:find('n1.txt', 1, true) and text:find('n2.txt', 1, true), 'every path is listed')
  check(not vim.bo[card].modifiable, 'the card is read-only')
  eq(#vim.lsp.get_clients({ name = 's_code' }), 1, 'no second server for the card')
  eq(vim.fn.win_findbuf(card), {}, 'the card window closed after the decision')
  -- asked again: the same buffer in one window, never a second split
  local wins = #vim.api.nvim_list_wins()
  answers = { 'Show details', 'Show details', 'Deny' }
  s_code.call_sync('apply_patch', { files = { { path = 'n3.txt', expected_revision = vim.NIL, content = 'z\n' } } })
  eq(#vim.api.nvim_list_wins(), wins, 'no window left behind')
  eq(require('s_code.ui').scratch('card'), card, 'the card buffer is reused')
end

--- The card of a command, shown through the prompt and "Show details": the buffer holds the
--- server's document line for line. With S_CODE_CARD_OUT set, what was shown is written there
--- (tests/editors/test_card_faces.py compares it with the other faces).
function cases.card_face()
  open('a.txt')
  answers = { 'Show details', 'Deny' }
  local err = s_code.call_sync('run_command', { command = { 'true' } })
  eq(kind(err), 'approval_denied', 'denied after reading the details')
  local card = require('s_code.ui').scratch('card')
  local shown = lines(card)
  eq(shown, vim.fn.readfile(require('s_code.handlers').card_path), 'the buffer is the document')
  local out = os.getenv('S_CODE_CARD_OUT')
  if out then
    vim.fn.writefile({ vim.json.encode({ asked = prompts, shown = table.concat(shown, '\n') }) }, out)
  end
end

function cases.host_processes_list_approve_and_call()
  local sample = vim.fs.normalize(plugin .. '/../../samples/mcp/notes_server.py')
  vim.fn.mkdir(ws .. '/.s-code', 'p')
  vim.fn.writefile(
    { vim.json.encode({ mcpServers = { notes = { command = python, args = { sample } } } }) },
    ws .. '/.s-code/mcp.json'
  )
  open('a.txt')
  vim.cmd('SCodeHostProcesses')
  local ok = vim.wait(10000, function()
    local text = table.concat(lines(require('s_code.ui').scratch('host-processes')), '\n')
    return text:find('mcp notes (workspace layer): pending', 1, true) ~= nil
  end, 50)
  check(ok, ':SCodeHostProcesses shows the server pending')
  answers = { 'Approve once' }
  vim.cmd('SCodeApprove notes')
  ok = vim.wait(20000, function()
    local hosts = require('s_code.handlers').hosts
    for _, e in ipairs(hosts and hosts.entries or {}) do
      if e.name == 'notes' and e.state == 'running' and e.tools and #e.tools > 0 then
        return true
      end
    end
    return false
  end, 50)
  check(ok, 'approved, the server runs (s-code/hostProcesses/updated)')
  check(prompts[1]:find('outside the sandbox', 1, true), 'the prompt says: ' .. tostring(prompts[1]))
  local err, result = s_code.call_sync('mcp__notes__read_note', { name = 'welcome' })
  check(err == nil, 'the MCP tool answers: ' .. vim.inspect(err))
  check(result.content[1].text:find('host processes', 1, true), 'its result')
end

--- A background terminal: its start is approved at the prompt, its output lands in a buffer that
--- a window follows, and :SCodeTerminals kills it (the list then says so).
function cases.terminal_follows_output_and_is_killed()
  open('a.txt')
  answers = { 'Approve once' }
  local code = "import sys, time\nprint('serving on 8000', flush=True)\nfor l in sys.stdin: print('got ' + l.strip(), flush=True)"
  local err, r = s_code.call_sync('terminal_start', { command = { python, '-u', '-c', code } })
  check(err == nil, 'terminal_start: ' .. vim.inspect(err))
  check(prompts[1]:find('outside the sandbox', 1, true), 'the start asked: ' .. tostring(prompts[1]))
  local name = 'terminal-' .. r.terminal_id
  local buf = require('s_code.ui').scratch(name)
  local ok = vim.wait(10000, function()
    return table.concat(lines(buf), '\n'):find('serving on 8000', 1, true) ~= nil
  end, 20)
  check(ok, 'the output reached s-code://' .. name .. ': ' .. vim.inspect(lines(buf)))
  err = s_code.call_sync('terminal_write', { terminal_id = r.terminal_id, text = 'ping\n' })
  check(err == nil, 'terminal_write: ' .. vim.inspect(err))
  ok = vim.wait(10000, function()
    local win = vim.fn.bufwinid(buf)
    local last = vim.api.nvim_buf_line_count(buf)
    return win ~= -1 and table.concat(lines(buf), '\n'):find('got ping', 1, true) ~= nil
      and vim.api.nvim_win_get_cursor(win)[1] == last
  end, 20)
  check(ok, 'a window shows the buffer and follows its end: ' .. vim.inspect(lines(buf)))
  answers = { 1, 2 } -- the first terminal, then "Kill"
  vim.cmd('SCodeTerminals')
  ok = vim.wait(20000, function()
    local _, listed = s_code.call_sync('terminal_list', vim.empty_dict())
    return listed ~= nil and listed.terminals[1].state == 'killed'
  end, 100)
  check(ok, ':SCodeTerminals killed it')
  check(offered[#offered - 1][1]:find(r.terminal_id, 1, true), 'the picker: ' .. vim.inspect(offered))
end

function cases.undo_turn_command_restores()
  open('a.txt')
  local r = read('b.txt')
  answers = { 'Approve once' }
  local err, result = edit_line('b.txt', r.revision, 1, 'CHANGED')
  check(err == nil, 'apply_patch failed: ' .. vim.inspect(err))
  eq(result.applied[1].via, 'disk', 'b.txt is not open: written to disk')
  eq(disk('b.txt')[1], 'CHANGED', 'written')
  answers = { 1 } -- the newest turn in the picker
  vim.cmd('SCodeUndoTurn')
  local ok = vim.wait(10000, function()
    return disk('b.txt')[1] == 'alpha'
  end, 20)
  check(ok, ':SCodeUndoTurn restored b.txt')
  check(offered[#offered][1]:find('1 file: b.txt', 1, true), 'the picker names the files: ' .. vim.inspect(offered))
end

--- After Neovim (or the server) restarts, the turns and the plan come from the server's store.
function cases.turns_and_plan_survive_a_restart()
  open('a.txt')
  local r = read('b.txt')
  answers = { 'Approve once' }
  local err = edit_line('b.txt', r.revision, 1, 'CHANGED')
  check(err == nil, 'apply_patch failed: ' .. vim.inspect(err))
  check(s_code.call_sync('update_plan', { plan = { { step = 'Keep me', status = 'pending' } } }) == nil, 'plan')
  -- a fresh start: the server stops, the plugin forgets what it saw
  local old = s_code.client()
  old:stop()
  vim.wait(10000, function()
    return old:is_stopped()
  end, 20)
  s_code.turns = {}
  require('s_code.handlers').plan = nil
  vim.cmd('edit!')
  vim.wait(20000, function()
    local c = s_code.client()
    return c ~= nil and c.id ~= old.id and c.initialized
  end, 20)
  vim.cmd('SCodePlan')
  local ok = vim.wait(5000, function()
    return table.concat(lines(require('s_code.ui').scratch('plan')), '\n'):find('Keep me', 1, true) ~= nil
  end, 20)
  check(ok, ':SCodePlan shows the plan from the server')
  answers = { 1 }
  vim.cmd('SCodeUndoTurn')
  ok = vim.wait(10000, function()
    return disk('b.txt')[1] == 'alpha'
  end, 20)
  check(ok, ':SCodeUndoTurn offered the turn from before the restart')
end

--- Line counts in the prompt and the card are the editor's: an 11-line buffer has 11 lines.
function cases.card_counts_lines_as_the_editor_does()
  local eleven = {}
  for i = 1, 11 do
    table.insert(eleven, 'line ' .. i)
  end
  vim.fn.writefile(eleven, ws .. '/eleven.txt')
  open('eleven.txt')
  local r = read('eleven.txt')
  eq(r.line_count, 11, 'read_file counts 11')
  answers = { 'Show details', 'Approve once' }
  local err = s_code.call_sync('apply_patch', {
    files = {
      { path = 'eleven.txt', expected_revision = r.revision, edits = { { start_line = 2, end_line = 2, new_text = 'two\nand a half' } } },
      { path = 'brand-new.txt', expected_revision = vim.NIL, content = 'a\nb\nc\n' },
    },
  })
  check(err == nil, 'apply_patch failed: ' .. vim.inspect(err))
  local card = table.concat(lines(require('s_code.ui').scratch('card')), '\n')
  print(card)
  check(card:find('eleven.txt  (+2 -1', 1, true), 'the card counts the change: ' .. card)
  check(card:find('brand-new.txt  (new, 3 lines', 1, true), 'a new file has its count: ' .. card)
  check(prompts[1]:find('eleven.txt (+2 -1)', 1, true), 'the prompt too: ' .. prompts[1])
end

function cases.empty_arguments_go_out_as_objects()
  open('a.txt')
  local err, r = s_code.call_sync('list_files', {})
  check(err == nil, 'list_files {}: ' .. vim.inspect(err))
  check(#r.entries > 0, 'entries')
  err = s_code.call_sync('list_files', nil)
  check(err == nil, 'list_files with no arguments: ' .. vim.inspect(err))
  local e3 = s_code.call_sync('git_status', {}) -- an empty .git here: refused for that, not the shape
  eq(kind(e3), 'not_found', 'git_status {} reached the tool')
end

--- A buffer outside any workspace starts no server; calls go to the workspace's server.
function cases.outside_a_workspace_no_server_starts()
  open('a.txt')
  local outside = vim.fn.tempname() .. '.txt'
  vim.fn.writefile({ 'elsewhere' }, outside)
  vim.cmd.edit(outside)
  vim.wait(1000)
  eq(#vim.lsp.get_clients({ name = 's_code' }), 1, 'one server, the workspace one')
  local err, r = s_code.call_sync('read_file', { path = 'a.txt' })
  check(err == nil and r.line_count == 3, 'the call from the outside buffer reached the workspace: ' .. vim.inspect(err))
end

function cases.statusline_shows_mode_and_tier()
  open('a.txt')
  local ok = vim.wait(5000, function()
    return s_code.statusline():find('s-code manual', 1, true) ~= nil
  end, 20)
  check(ok, 'mode: ' .. s_code.statusline())
  check(s_code.statusline():find('tier %d'), 'tier: ' .. s_code.statusline())
  vim.cmd('SCodeMode accept-edits')
  ok = vim.wait(5000, function()
    return s_code.statusline():find('accept-edits', 1, true) ~= nil
  end, 20)
  check(ok, 'the mode follows :SCodeMode: ' .. s_code.statusline())
end

--- The agent fixes a file in its open buffer, then runs a command: the buffer is saved first, so
--- the command sees the fix; the output view opens (the cursor stays), with a header and an exit.
function cases.command_after_an_agent_edit_sees_it()
  local buf = open('a.txt')
  local r = read('a.txt')
  answers = { 'Approve once' }
  local err, result = edit_line('a.txt', r.revision, 1, 'FIXED')
  check(err == nil, 'apply_patch failed: ' .. vim.inspect(err))
  eq(result.applied[1].via, 'editor', 'through the buffer')
  check(vim.bo[buf].modified, 'unsaved after the edit')
  local win = vim.api.nvim_get_current_win()
  answers = { 'Approve once' }
  local e2, run = s_code.call_sync('run_command', { command = { 'head', '-n', '1', 'a.txt' } })
  check(e2 == nil, 'run_command failed: ' .. vim.inspect(e2))
  check(run.output:find('FIXED', 1, true), 'the command saw the edit: ' .. run.output)
  eq(run.unsaved_buffers, nil, 'nothing left unsaved')
  check(not vim.bo[buf].modified, 'the buffer was saved')
  eq(disk('a.txt')[1], 'FIXED', 'on disk')
  eq(vim.api.nvim_get_current_win(), win, 'the cursor stayed')
  local out = require('s_code.ui').scratch('output')
  check(#vim.fn.win_findbuf(out) == 1, 'the output view is open')
  local ok = vim.wait(5000, function()
    local text = table.concat(lines(out), '\n')
    return text:find('\n$ [^\n]*head %-n 1 a%.txt') and text:find('[exit 0,', 1, true)
  end, 20)
  check(ok, 'header and exit line: ' .. table.concat(lines(out), '\n'))
end

function cases.plan_mode_and_command_output()
  open('a.txt')
  local err = s_code.call_sync('update_plan', {
    plan = { { step = 'Write the tests', status = 'in_progress' }, { step = 'Ship', status = 'pending' } },
  })
  check(err == nil, 'update_plan failed: ' .. vim.inspect(err))
  vim.wait(2000, function()
    return require('s_code.handlers').plan ~= nil
  end)
  vim.cmd('SCodePlan')
  local plan = table.concat(lines(vim.api.nvim_get_current_buf()), '\n')
  check(plan:find('[~] Write the tests', 1, true), 'the plan is shown: ' .. plan)
  vim.cmd('SCodeMode workspace')
  vim.wait(5000, function()
    local _, m = s_code.call_sync('read_file', { path = 'a.txt' })
    return m ~= nil
  end)
  local e2, run = s_code.call_sync('run_command', { command = { 'sh', '-c', 'echo streamed-line' } })
  check(e2 == nil, 'run_command failed: ' .. vim.inspect(e2))
  eq(run.exit_code, 0, 'exit code')
  local out = table.concat(lines(require('s_code.ui').scratch('output')), '\n')
  check(out:find('streamed-line', 1, true), 'output streamed into the buffer: ' .. out)
end

function cases.code_mode_calls_nested_in_output()
  open('a.txt')
  local code = "return [tools.read_file({ path: 'a.txt' }).line_count, tools.read_file({ path: 'b.txt' }).line_count]"
  local err, run = s_code.call_sync('code_mode', { code = code })
  check(err == nil, 'code_mode failed: ' .. vim.inspect(err))
  eq(run.result, { 3, 2 }, 'result')
  local want = { 'code_mode ' .. run.run_id, '  1. read_file {"path":"a.txt"}', '  1. read_file ok (', '  2. read_file ok (' }
  local ok = vim.wait(5000, function()
    local out = table.concat(lines(require('s_code.ui').scratch('output')), '\n')
    for _, piece in ipairs(want) do
      if not out:find(piece, 1, true) then
        return false
      end
    end
    return true
  end, 20)
  check(ok, 'child calls nested under the run: ' .. table.concat(lines(require('s_code.ui').scratch('output')), '\n'))
end

function cases.commands_complete_and_show()
  open('a.txt')
  eq(vim.fn.getcompletion('SCodeMode ', 'cmdline'), { 'manual', 'accept-edits', 'workspace' }, 'modes')
  vim.cmd('SCodeTools')
  local ok = vim.wait(10000, function()
    local text = table.concat(lines(require('s_code.ui').scratch('tools')), '\n')
    return text:find('run_command', 1, true) ~= nil
  end, 20)
  check(ok, ':SCodeTools lists the tools')
  vim.cmd('SCodeSandboxPreview make test')
  ok = vim.wait(10000, function()
    local text = table.concat(lines(require('s_code.ui').scratch('sandbox')), '\n')
    return text:find('decision in this mode: ask', 1, true) ~= nil
  end, 20)
  check(ok, ':SCodeSandboxPreview shows the profile and that manual mode asks')
end

--- The agent link the sidecar serves (s-code/agents/list), once it listens.
local function agent_link()
  local view
  local ok = vim.wait(20000, function()
    local reply = s_code.client():request_sync(require('s_code.methods').AGENTS_LIST, vim.empty_dict(), 5000)
    view = reply and reply.result
    return view ~= nil and type(view.socket) == 'string'
  end, 50)
  check(ok, 'the sidecar never listened for agents: ' .. vim.inspect(view))
  return view
end

local function health()
  vim.cmd('checkhealth s_code')
  local text = table.concat(lines(vim.api.nvim_get_current_buf()), '\n')
  vim.cmd('tabclose')
  return text
end

function cases.health_check_passes()
  open('a.txt')
  local view = agent_link()
  local text = health()
  check(text:find('OK Neovim', 1, true), 'Neovim version checked: ' .. text)
  check(text:find('OK server command', 1, true), 'server found')
  check(text:find('OK version: s-code', 1, true), 'version: ' .. text)
  check(text:find('sandbox: tier', 1, true), 'sandbox tier reported')
  check(text:find('OK running: s-code', 1, true), 'the running client is seen')
  check(view.socket:find('^' .. vim.pesc(os.getenv('XDG_RUNTIME_DIR') .. '/s-code/agent-') .. '%x+%.sock$'), view.socket)
  check(text:find('OK agent socket: ' .. view.socket, 1, true), 'the agent socket: ' .. text)
  check(text:find('agents attached: none', 1, true), 'no agent attached: ' .. text)
  check(not text:find('ERROR', 1, true), 'no errors: ' .. text)
end

--- An agent (`s-code mcp`, driven by the MCP SDK's client: agent.py) attaches to the sidecar:
--- its edit is asked about here, naming it; :SCodeAgents and :checkhealth list it by name until
--- it goes away.
function cases.agents_command_lists_an_attached_agent()
  local buf = open('a.txt')
  local view = agent_link()
  local name = 'Claude Code (test agent)'
  local script = vim.fs.normalize(plugin .. '/../../tests/editors/neovim/agent.py')
  local out, err = {}, {}
  answers = { 'Approve once' }
  local proc = vim.system({ python, script, ws, name }, {
    stdin = true,
    stdout = function(_, data)
      table.insert(out, data)
    end,
    stderr = function(_, data)
      table.insert(err, data)
    end,
  })
  local said = function()
    return table.concat(out, '')
  end
  local ok = vim.wait(60000, function()
    return said():find('"step": "patch"', 1, true) ~= nil
  end, 20)
  check(ok, 'the agent never finished its calls: ' .. said() .. table.concat(err, ''))
  local steps = vim.tbl_map(vim.json.decode, vim.split(vim.trim(said()), '\n', { plain = true }))
  eq(steps[1].is_error, false, 'the agent read a.txt')
  eq(steps[2].is_error, false, 'the edit was approved: ' .. vim.inspect(steps[2]))
  eq(#prompts, 1, 'the edit was asked about here')
  check(prompts[1]:find(name, 1, true), 'the prompt names the agent: ' .. prompts[1])
  eq(lines(buf)[1], 'AGENT', "the agent's edit is in the buffer")
  vim.cmd('SCodeAgents')
  local listing = require('s_code.ui').scratch('agents')
  ok = vim.wait(10000, function()
    return table.concat(lines(listing), '\n'):find('- ' .. name .. '  (agent-', 1, true) ~= nil
  end, 20)
  check(ok, ':SCodeAgents lists the agent: ' .. table.concat(lines(listing), '\n'))
  check(table.concat(lines(listing), '\n'):find('agent socket: ' .. view.socket, 1, true), 'and the socket')
  local text = health()
  check(text:find('OK agents attached: ' .. name, 1, true), ':checkhealth lists it: ' .. text)
  proc:write(nil) -- the agent goes away
  proc:wait(20000)
  ok = vim.wait(20000, function()
    vim.cmd('SCodeAgents')
    vim.wait(200)
    return table.concat(lines(listing), '\n'):find('(no agent attached', 1, true) ~= nil
  end, 50)
  check(ok, 'the agent left the list: ' .. table.concat(lines(listing), '\n'))
end

local fn = cases[case]
if fn == nil then
  print('not ok ' .. tostring(case) .. ': no such case')
  os.exit(1)
end
local ok, err = xpcall(fn, debug.traceback)
if ok then
  print('ok ' .. case)
else
  print('not ok ' .. case .. ': ' .. tostring(err))
end
io.stdout:flush()
os.exit(ok and 0 or 1)
