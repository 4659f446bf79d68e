#!/usr/bin/env bash
# A real Neovim in tmux (80x24) with the plugin, asked to approve an agent edit: the screen as text,
# for docs/editors/neovim-screen.txt. Usage: capture_screen.sh OUT (from the repository's root).
set -euo pipefail
out="$1"
root="$(pwd)"
tmp="$(mktemp -d)"
trap 'tmux kill-session -t s-code-capture 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir "$tmp/ws" && git init -q "$tmp/ws"
printf 'def add(a, b):\n    return a - b\n' > "$tmp/ws/calc.py"
cat > "$tmp/init.lua" <<LUA
vim.opt.rtp:prepend('$root/editors/neovim')
vim.o.swapfile = false
vim.o.laststatus = 2
vim.o.statusline = "%f %m%=%{v:lua.require's_code'.statusline()} "
require('s_code').setup({ cmd = { '$root/.venv/bin/python', '-m', 's_code', 'serve' }, enable = true })
LUA
agent="lua local s=require('s_code'); s.call('read_file', {path='calc.py'}, function(_, r) s.call('apply_patch', {files={{path='calc.py', expected_revision=r.revision, edits={{start_line=2, end_line=2, new_text='    return a + b'}}}}}, function() end) end)"
tmux new-session -d -s s-code-capture -x 80 -y 24 -c "$tmp/ws" \
  "env S_CODE_STATE_DIR=$tmp/state XDG_STATE_HOME=$tmp/xdg $root/.venv/bin/nvim -u $tmp/init.lua calc.py"
sleep 4
tmux send-keys -t s-code-capture ":$agent" Enter
sleep 3
tmux send-keys -t s-code-capture "2" Enter   # Show details: the card opens, the question comes back
sleep 3
tmux capture-pane -p -t s-code-capture > "$out"
