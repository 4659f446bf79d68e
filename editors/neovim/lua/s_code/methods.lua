-- The s-code method names this plugin uses. A test checks them against the server's constants
-- (server/s_code/protocol/methods.py).
local M = {}

M.TOOLS_LIST = 's-code/tools/list'
M.TOOLS_CALL = 's-code/tools/call'
M.PERMISSION_MODE_GET = 's-code/permissionMode/get'
M.PERMISSION_MODE_SET = 's-code/permissionMode/set'
M.TURN_BEGIN = 's-code/turn/begin'
M.TURN_END = 's-code/turn/end'
M.TURN_UNDO = 's-code/turn/undo'
M.TURN_LIST = 's-code/turn/list'
M.PLAN_GET = 's-code/plan/get'
M.SANDBOX_PREVIEW = 's-code/sandbox/preview'
M.APPROVAL_DETAILS = 's-code/approval/details'
M.HOST_PROCESSES_LIST = 's-code/hostProcesses/list'
M.HOST_PROCESSES_APPROVE = 's-code/hostProcesses/approve'
M.HOST_PROCESSES_REVOKE = 's-code/hostProcesses/revoke'
M.AGENTS_LIST = 's-code/agents/list'
M.HOST_PROCESSES_UPDATED = 's-code/hostProcesses/updated'
M.PLAN_UPDATED = 's-code/planUpdated'
M.COMMAND_OUTPUT = 's-code/commandOutput'
M.COMMAND_STATUS = 's-code/commandStatus'
M.DOCUMENTS_SAVE = 's-code/documents/save'
M.CODE_MODE_RUN = 's-code/codeMode/run'
M.CODE_MODE_TOOL_CALL = 's-code/codeMode/toolCall'
M.TERMINAL_OUTPUT = 's-code/terminalOutput'

M.MODES = { 'manual', 'accept-edits', 'workspace' }

return M
