// The s-code method names this extension uses. A test checks them against the server's constants
// (server/s_code/protocol/methods.py).
export const TOOLS_LIST = 's-code/tools/list';
export const TOOLS_CALL = 's-code/tools/call';
export const PERMISSION_MODE_GET = 's-code/permissionMode/get';
export const PERMISSION_MODE_SET = 's-code/permissionMode/set';
export const TURN_UNDO = 's-code/turn/undo';
export const TURN_LIST = 's-code/turn/list';
export const PLAN_GET = 's-code/plan/get';
export const SANDBOX_PREVIEW = 's-code/sandbox/preview';
export const APPROVAL_REQUEST = 's-code/approval/request';
export const PLAN_UPDATED = 's-code/planUpdated';
export const COMMAND_OUTPUT = 's-code/commandOutput';
export const COMMAND_STATUS = 's-code/commandStatus';
export const DOCUMENTS_SAVE = 's-code/documents/save';
export const CODE_MODE_RUN = 's-code/codeMode/run';
export const CODE_MODE_TOOL_CALL = 's-code/codeMode/toolCall';
export const HOST_PROCESSES_LIST = 's-code/hostProcesses/list';
export const HOST_PROCESSES_APPROVE = 's-code/hostProcesses/approve';
export const HOST_PROCESSES_REVOKE = 's-code/hostProcesses/revoke';
export const AGENTS_LIST = 's-code/agents/list';
export const HOST_PROCESSES_UPDATED = 's-code/hostProcesses/updated';
export const TERMINAL_OUTPUT = 's-code/terminalOutput';

export const MODES = ['manual', 'accept-edits', 'workspace'] as const;
export type Mode = (typeof MODES)[number];
