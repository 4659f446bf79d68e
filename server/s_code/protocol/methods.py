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
SANDBOX_PREVIEW = "s-code/sandbox/preview"
APPROVAL_DETAILS = "s-code/approval/details"
EDIT_FORMAT_GET = "s-code/editFormat/get"
EDIT_FORMAT_SET = "s-code/editFormat/set"
HOST_PROCESSES_LIST = "s-code/hostProcesses/list"
HOST_PROCESSES_APPROVE = "s-code/hostProcesses/approve"
HOST_PROCESSES_REVOKE = "s-code/hostProcesses/revoke"

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

# Server -> client notifications.
PLAN_UPDATED = "s-code/planUpdated"
COMMAND_OUTPUT = "s-code/commandOutput"
HOST_PROCESSES_UPDATED = "s-code/hostProcesses/updated"

# Server -> client requests.
APPROVAL_REQUEST = "s-code/approval/request"

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
}

CONTROL_METHODS = (
    TOOLS_LIST,
    TOOLS_CALL,
    PERMISSION_MODE_GET,
    PERMISSION_MODE_SET,
    TURN_BEGIN,
    TURN_END,
    TURN_UNDO,
    SANDBOX_PREVIEW,
    APPROVAL_DETAILS,
    EDIT_FORMAT_GET,
    EDIT_FORMAT_SET,
    HOST_PROCESSES_LIST,
    HOST_PROCESSES_APPROVE,
    HOST_PROCESSES_REVOKE,
)
NOTIFICATIONS = (PLAN_UPDATED, COMMAND_OUTPUT, HOST_PROCESSES_UPDATED)
SERVER_REQUESTS = (APPROVAL_REQUEST,)
