-- Drives a real headless Neovim through the conductor plugin; writes what it saw as JSON.
local env = function(k) return (assert(os.getenv(k), k)) end
local out = { mode = env("CONDUCTOR_MODE") }
vim.opt.rtp:prepend(env("CONDUCTOR_PLUGIN"))
local conductor = { messages = {} }

local function finish()
  out.lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  out.modified = vim.bo.modified
  out.messages = conductor.messages
  local f = assert(io.open(env("CONDUCTOR_OUT"), "w"))
  f:write(vim.json.encode(out))
  f:close()
  vim.cmd("qa!")
end

local function has(kind)
  for _, m in ipairs(conductor.messages) do
    if m.kind == kind then return true end
  end
  return false
end

local function main()
local ok, err = pcall(function()
  conductor = require("conductor")
  conductor.setup({
    cmd = vim.json.decode(env("CONDUCTOR_CMD")),
    root_markers = { "conductor.toml" },
    notify_progress = false,
  })
  vim.cmd("edit " .. env("CONDUCTOR_FILE"))
  out.attached = vim.wait(30000, function()
    return #vim.lsp.get_clients({ bufnr = 0, name = "conductor" }) > 0
  end, 50)
  local ns = vim.api.nvim_create_namespace("conductor-test")
  vim.diagnostic.set(ns, 0, { {
    lnum = 1, col = 4, end_lnum = 1, end_col = 16,
    message = "add() subtracts", severity = vim.diagnostic.severity.ERROR, source = "test",
  } })
  vim.api.nvim_win_set_cursor(0, { 2, 4 })
  vim.lsp.buf.code_action({
    -- diagnostics set by hand are not LSP-born, so hand them over as a linter plugin would
    context = { diagnostics = vim.lsp.diagnostic.from(vim.diagnostic.get(0, { lnum = 1 })) },
    apply = true,
    filter = function(a) return a.title == "Conductor: fix this problem" end,
  })
  if out.mode == "fix" then
    out.fixed = vim.wait(40000, function()
      return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n"):find("a %+ b") ~= nil
    end, 50)
    out.ended = vim.wait(10000, function() return has("end") end, 50)
  else
    out.began = vim.wait(60000, function() return has("begin") end, 50)
    vim.wait(300)
    vim.cmd("ConductorCancel")
    out.ended = vim.wait(20000, function() return has("end") end, 50)
    vim.wait(500)
  end
end)
out.error = not ok and tostring(err) or nil
finish()
end

-- Files open after startup (when filetype detection is on), as for a user.
vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() vim.schedule(main) end })
