-- s-code: the agent's tool host, as a Neovim 0.11 LSP configuration (pure data).
-- Put this plugin on the runtimepath and call `vim.lsp.enable('s_code')`.
-- Handlers, user commands and options come from plugin/s_code.lua and require('s_code').setup().
---@type vim.lsp.Config
return {
  cmd = { 's-code', 'serve' },
  root_markers = { '.git', '.s-code', 'pyproject.toml', 'package.json', 'Cargo.toml', 'go.mod', 'Makefile' },
  -- a buffer outside any workspace (a card, a help page, a file in /tmp) starts no server: one
  -- server per workspace, each with its folder
  workspace_required = true,
  init_options = {
    permissionMode = 'manual',
    editApplication = 'auto',
  },
}
