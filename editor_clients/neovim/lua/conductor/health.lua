-- :checkhealth conductor
local M = {}

function M.check()
  local h = vim.health
  h.start("conductor")
  if vim.fn.has("nvim-0.11") == 1 then
    h.ok("Neovim " .. tostring(vim.version()))
  else
    h.error("Neovim 0.11 or newer is needed")
  end
  local cfg = require("conductor").config
  local exe = cfg.cmd[1]
  if vim.fn.executable(exe) == 1 then
    h.ok("server command found: " .. exe)
    local out = vim.system({ exe, "doctor" }, { text = true }):wait(30000)
    if out.code == 0 then
      h.info(out.stdout)
    else
      h.warn("`" .. exe .. " doctor` failed: " .. (out.stderr or ""))
    end
  else
    h.error("server command not found: " .. exe, {
      "in the conductor-lsp clone: bash scripts/install.sh (the server is then .venv/bin/conductor-lsp)",
      "or set cmd = { '/path/to/conductor-lsp/.venv/bin/conductor-lsp', 'serve' } in setup{}",
    })
  end
  local clients = vim.lsp.get_clients({ name = "conductor" })
  if #clients > 0 then
    h.ok("server running (client id " .. clients[1].id .. ")")
  else
    h.info("server not running: " .. require("conductor").why_not())
  end
end

return M
