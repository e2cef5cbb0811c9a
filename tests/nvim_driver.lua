-- Drives a real headless Neovim through the conductor plugin; writes what it saw as JSON.
local env = function(k) return (assert(os.getenv(k), k)) end
local out = { mode = env("CONDUCTOR_MODE") }
-- How long to wait for one thing before calling it a hang (tests/helpers.py WAIT).
local WAIT = tonumber(env("CONDUCTOR_WAIT_MS"))
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

local function ends()
  local n = 0
  for _, m in ipairs(conductor.messages) do
    if m.kind == "end" then n = n + 1 end
  end
  return n
end

local function disk()
  local f = assert(io.open(env("CONDUCTOR_FILE")))
  local text = f:read("*a")
  f:close()
  return text
end

-- The first line of the block the review or candidates buffer shows for ``index``.
local function line_of(at, index)
  local best
  for line, v in pairs(at) do
    local i = type(v) == "table" and v.index or v
    if i == index and (best == nil or line < best) then best = line end
  end
  return assert(best, "no line for " .. index)
end

local function press(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

-- Review: accept the first hunk, reject the second with a reason, try again; then
-- accept the retry's fix whole.
local function review()
  vim.ui.input = function(_, cb) cb(env("CONDUCTOR_REASON")) end
  vim.cmd("ConductorFixTests")
  out.shown = vim.wait(WAIT, function() return conductor.last_review ~= nil end, 50)
  local st = conductor.last_review
  out.review_lines = vim.api.nvim_buf_get_lines(st.buf, 0, -1, false)
  vim.api.nvim_win_set_cursor(0, { line_of(st.at, st.hunks[1].index), 0 })
  press("y")
  vim.api.nvim_win_set_cursor(0, { line_of(st.at, st.hunks[2].index), 0 })
  press("r")
  out.marked = vim.api.nvim_buf_get_lines(st.buf, 0, -1, false)
  press("t")
  out.answer = st.answer
  out.disk_between = nil
  out.shown_again = vim.wait(WAIT, function()
    return conductor.last_review ~= st
  end, 50)
  local again = conductor.last_review
  out.retry_hunks = #again.hunks
  press("a")
  press("<CR>")
  out.ended = vim.wait(WAIT, function() return has("end") end, 50)
  out.disk = disk()
end

-- Candidates: apply the one the job did not choose, then undo.
local function candidates()
  vim.cmd("ConductorFixTests")
  out.fixed = vim.wait(WAIT, function() return ends() >= 1 end, 50)
  out.disk_fixed = disk()
  vim.cmd("ConductorCandidates")
  out.listed = vim.wait(WAIT, function() return conductor.last_candidates ~= nil end, 50)
  local shown = conductor.last_candidates
  out.candidate_lines = vim.api.nvim_buf_get_lines(shown.buf, 0, -1, false)
  vim.api.nvim_win_set_cursor(0, { line_of(shown.at, 0), 0 })
  press("a")
  out.applied = vim.wait(WAIT, function() return ends() >= 2 end, 50)
  out.disk_applied = disk()
  vim.cmd("ConductorUndo")
  out.undone = vim.wait(WAIT, function() return ends() >= 3 end, 50)
  out.disk_undone = disk()
end

-- A server that exits at once: a command then says why nothing runs.
local function exited()
  out.default_cmd = conductor.defaults.cmd
  out.gone = vim.wait(WAIT, function() return conductor.last_exit ~= nil end, 50)
  local said = {}
  vim.notify = function(msg) table.insert(said, msg) end
  conductor.fix()
  out.notified = said
end

local function main()
local ok, err = pcall(function()
  conductor = require("conductor")
  conductor.setup({
    cmd = vim.json.decode(env("CONDUCTOR_CMD")),
    root_markers = { "conductor.toml" },
    notify_progress = false,
    settings = vim.json.decode(os.getenv("CONDUCTOR_SETTINGS") or "{}"),
  })
  vim.cmd("edit " .. env("CONDUCTOR_FILE"))
  if out.mode == "exited" then return exited() end
  out.attached = vim.wait(WAIT, function()
    return #vim.lsp.get_clients({ bufnr = 0, name = "conductor" }) > 0
  end, 50)
  if out.mode == "review" then return review() end
  if out.mode == "candidates" then return candidates() end
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
    out.fixed = vim.wait(WAIT, function()
      return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n"):find("a %+ b") ~= nil
    end, 50)
    out.ended = vim.wait(WAIT, function() return has("end") end, 50)
  else
    out.began = vim.wait(WAIT, function() return has("begin") end, 50)
    vim.wait(300)
    vim.cmd("ConductorCancel")
    out.ended = vim.wait(WAIT, function() return has("end") end, 50)
    vim.wait(500)
  end
end)
out.error = not ok and tostring(err) or nil
finish()
end

-- Files open after startup (when filetype detection is on), as for a user.
vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() vim.schedule(main) end })
