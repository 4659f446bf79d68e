"""Every ``s-code/*`` method name, in one place.

The editor integrations (``editors/neovim``, ``editors/vscode``) keep copies of these names; a test
checks that the copies match.
"""

from __future__ import annotations

PROTOCOL_VERSION = 1

# Control methods (LSP camelCase params).
TOOLS_LIST = "s-code/tools/list"
TOOLS_CALL = "s-code/tools/call"
PERMISSION_MODE_GET = "s-code/permissionMode/get"
PERMISSION_MODE_SET = "s-code/permissionMode/set"
TURN_BEGIN = "s-code/turn/begin"
TURN_END = "s-code/turn/end"
TURN_UNDO = "s-code/turn/undo"
TURN_LIST = "s-code/turn/list"
PLAN_GET = "s-code/plan/get"
SANDBOX_PREVIEW = "s-code/sandbox/preview"
APPROVAL_DETAILS = "s-code/approval/details"
EDIT_FORMAT_GET = "s-code/editFormat/get"
EDIT_FORMAT_SET = "s-code/editFormat/set"
HOST_PROCESSES_LIST = "s-code/hostProcesses/list"
HOST_PROCESSES_APPROVE = "s-code/hostProcesses/approve"
HOST_PROCESSES_REVOKE = "s-code/hostProcesses/revoke"
AGENTS_LIST = "s-code/agents/list"

# Typed tool methods (model-facing snake_case params).
READ_FILE = "s-code/readFile"
APPLY_PATCH = "s-code/applyPatch"
LIST_FILES = "s-code/listFiles"
SEARCH_TEXT = "s-code/searchText"
UPDATE_PLAN = "s-code/updatePlan"
TOOLS_SEARCH = "s-code/tools/search"
RUN_COMMAND = "s-code/runCommand"
GIT_STATUS = "s-code/git/status"
GIT_DIFF = "s-code/git/diff"
GIT_LOG = "s-code/git/log"
GIT_SHOW = "s-code/git/show"
GIT_BLAME = "s-code/git/blame"
CODE_MODE_RUN = "s-code/codeMode/run"
TERMINAL_START = "s-code/terminal/start"
TERMINAL_READ = "s-code/terminal/read"
TERMINAL_WRITE = "s-code/terminal/write"
TERMINAL_WAIT = "s-code/terminal/wait"
TERMINAL_KILL = "s-code/terminal/kill"
TERMINAL_LIST = "s-code/terminal/list"

# Server -> client notifications.
PLAN_UPDATED = "s-code/planUpdated"
COMMAND_OUTPUT = "s-code/commandOutput"
COMMAND_STATUS = "s-code/commandStatus"
HOST_PROCESSES_UPDATED = "s-code/hostProcesses/updated"
CODE_MODE_TOOL_CALL = "s-code/codeMode/toolCall"
TERMINAL_OUTPUT = "s-code/terminalOutput"

# Server -> client requests.
APPROVAL_REQUEST = "s-code/approval/request"
DOCUMENTS_SAVE = "s-code/documents/save"

# Every built-in tool's typed method, by tool name: the one table of them. The server advertises
# and binds these before the tool layer (pydantic models) is imported, and each ToolDef takes its
# method from here. Runtime tools (MCP) have no typed method: s-code/tools/call only.
TOOL_METHODS = {
    "read_file": READ_FILE,
    "apply_patch": APPLY_PATCH,
    "list_files": LIST_FILES,
    "search_text": SEARCH_TEXT,
    "update_plan": UPDATE_PLAN,
    "tool_search": TOOLS_SEARCH,
    "run_command": RUN_COMMAND,
    "git_status": GIT_STATUS,
    "git_diff": GIT_DIFF,
    "git_log": GIT_LOG,
    "git_show": GIT_SHOW,
    "git_blame": GIT_BLAME,
    "code_mode": CODE_MODE_RUN,
    "terminal_start": TERMINAL_START,
    "terminal_read": TERMINAL_READ,
    "terminal_write": TERMINAL_WRITE,
    "terminal_wait": TERMINAL_WAIT,
    "terminal_kill": TERMINAL_KILL,
    "terminal_list": TERMINAL_LIST,
}

CONTROL_METHODS = (
    TOOLS_LIST,
    TOOLS_CALL,
    PERMISSION_MODE_GET,
    PERMISSION_MODE_SET,
    TURN_BEGIN,
    TURN_END,
    TURN_UNDO,
    TURN_LIST,
    PLAN_GET,
    SANDBOX_PREVIEW,
    APPROVAL_DETAILS,
    EDIT_FORMAT_GET,
    EDIT_FORMAT_SET,
    HOST_PROCESSES_LIST,
    HOST_PROCESSES_APPROVE,
    HOST_PROCESSES_REVOKE,
    AGENTS_LIST,
)
NOTIFICATIONS = (
    PLAN_UPDATED,
    COMMAND_OUTPUT,
    COMMAND_STATUS,
    HOST_PROCESSES_UPDATED,
    CODE_MODE_TOOL_CALL,
    TERMINAL_OUTPUT,
)
SERVER_REQUESTS = (APPROVAL_REQUEST, DOCUMENTS_SAVE)
