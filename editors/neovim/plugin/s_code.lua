-- s-code: loaded at start-up when the plugin is on the runtimepath. Registers the handlers with the
-- `s_code` LSP configuration (lsp/s_code.lua) and the user commands; starts nothing by itself.
if vim.g.loaded_s_code then
  return
end
vim.g.loaded_s_code = true
if vim.fn.has('nvim-0.11') == 0 then
  return
end
vim.lsp.config('s_code', {
  handlers = require('s_code.handlers').table(),
  on_init = function(client)
    client:request('s-code/permissionMode/get', vim.empty_dict(), function(err, result)
      if not err and result then
        require('s_code').mode = result.mode
      end
    end)
  end,
  -- Neovim applies versioned TextDocumentEdits (and skips stale ones) but does not advertise it;
  -- s-code only edits open buffers through the editor when documentChanges is declared.
  -- saveDocuments: buffers holding the agent's edits are saved before a command or git reads the
  -- disk (setup({ save_before_run = false }) turns it off).
  capabilities = {
    workspace = { workspaceEdit = { documentChanges = true } },
    experimental = { sCode = { saveDocuments = true } },
  },
})
require('s_code.commands').register()
