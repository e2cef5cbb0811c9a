-- conductor.nvim: Neovim (0.11+) front end for the conductor-lsp language server.
local M = {}

-- The server of the clone this plugin lives in (editor_clients/neovim/lua/conductor/init.lua
-- is five folders below it), as scripts/install.sh puts it; else conductor-lsp on PATH.
local function default_cmd()
  local here = debug.getinfo(1, "S").source:sub(2)
  local clone = here
  for _ = 1, 5 do
    clone = vim.fs.dirname(clone)
  end
  local exe = clone .. "/.venv/bin/conductor-lsp"
  if vim.fn.executable(exe) == 1 then
    return { exe, "serve" }
  end
  return { "conductor-lsp", "serve" }
end

M.defaults = {
  -- How to start the server; the first element must be executable.
  cmd = default_cmd(),
  filetypes = nil, -- nil: every file type
  root_markers = { "conductor.toml", "pyproject.toml", ".git" },
  -- Same keys as conductor.toml, sent as initializationOptions and workspace/configuration.
  settings = {},
  -- Print progress messages (the statusline can use require("conductor").status()).
  notify_progress = true,
}

M.config = vim.deepcopy(M.defaults)
M.progress = {} -- token -> last message
M.messages = {} -- every progress message seen, in order (for tests and :messages)

M.last_exit = nil -- how the server last ended: { code = n, signal = n }

local function client()
  local clients = vim.lsp.get_clients({ name = "conductor", bufnr = 0 })
  if #clients == 0 then
    clients = vim.lsp.get_clients({ name = "conductor" })
  end
  return clients[1]
end

--- Why no server serves this buffer, in words a newcomer can act on.
function M.why_not()
  local exe = M.config.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    return "the server command is not executable: " .. exe
      .. " (run scripts/install.sh in the clone, or set cmd in setup{})"
  end
  if M.last_exit then
    return string.format("the server exited (code %d, signal %d): see :LspLog and :checkhealth conductor",
      M.last_exit.code, M.last_exit.signal)
  end
  return "no server was started for this buffer: it starts for a file under a folder holding one of "
    .. table.concat(M.config.root_markers, ", ") .. " (root_markers)"
end

local function exec(command, args)
  local c = client()
  if not c then
    vim.notify("conductor: " .. M.why_not(), vim.log.levels.ERROR)
    return
  end
  local params = { command = command, arguments = { args or vim.empty_dict() } }
  c:request("workspace/executeCommand", params, function(err, result)
    if err then
      vim.notify("conductor: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif type(result) == "table" and result.started == false then
      vim.notify(result.reason or "conductor: not started", vim.log.levels.WARN)
    end
  end, 0)
end

local function line_range(l1, l2)
  local last = vim.api.nvim_buf_get_lines(0, l2 - 1, l2, false)[1] or ""
  return {
    start = { line = l1 - 1, character = 0 },
    ["end"] = { line = l2 - 1, character = #last },
  }
end

function M.fix()
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  local diags = {}
  for _, d in ipairs(vim.diagnostic.get(0, { lnum = lnum - 1 })) do
    table.insert(diags, { message = d.message, line = d.lnum, source = d.source or "" })
  end
  exec("conductor.edit", { uri = vim.uri_from_bufnr(0), range = line_range(lnum, lnum), diagnostics = diags })
end

function M.rewrite(l1, l2, instruction)
  local args = { uri = vim.uri_from_bufnr(0), range = line_range(l1, l2) }
  if instruction and instruction ~= "" then
    args.instruction = instruction
  end
  exec("conductor.rewrite", args)
end

function M.fix_tests()
  exec("conductor.fixTests", { uri = vim.uri_from_bufnr(0) })
end

function M.cancel()
  exec("conductor.cancel", vim.empty_dict())
end

function M.undo()
  exec("conductor.undo", vim.empty_dict())
end

function M.plan()
  exec("conductor.showPlan", vim.empty_dict())
end

-- Review: the verified fix's hunks in a buffer before anything is written. ------------
M.review_keys = {
  y = "apply this hunk", n = "do not apply it",
  r = "do not apply it, and say why (the reason teaches the conductor)",
  a = "apply every hunk", d = "apply none",
  ["<CR>"] = "done: write the applied hunks",
  t = "done, and try again with your reasons", q = "done: write nothing",
}
M.last_review = nil -- the review buffer's state, for tests and statuslines

local MARK = { [true] = "[y]", [false] = "[n]" }

local function render(st)
  local lines = { "conductor: review the fix (" .. st.title .. ")" }
  local order = { "y", "n", "r", "a", "d", "<CR>", "t", "q" }
  for _, k in ipairs(order) do
    table.insert(lines, string.format("  %-4s %s", k, M.review_keys[k]))
  end
  st.at = {}
  for i, h in ipairs(st.hunks) do
    table.insert(lines, "")
    local mark = MARK[st.verdict[h.index]] or "[?]"
    local why = st.reasons[h.index] and ("  (" .. st.reasons[h.index] .. ")") or ""
    table.insert(lines, string.format("%s hunk %d/%d %s%s", mark, i, #st.hunks, h.label, why))
    st.at[#lines] = h.index
    for _, l in ipairs(vim.split(h.diff, "\n", { trimempty = true })) do
      table.insert(lines, l)
      st.at[#lines] = h.index
    end
  end
  vim.bo[st.buf].modifiable = true
  vim.api.nvim_buf_set_lines(st.buf, 0, -1, false, lines)
  vim.bo[st.buf].modifiable = false
end

local function hunk_here(st)
  return st.at[vim.api.nvim_win_get_cursor(0)[1]]
end

local function answer(st, again, none)
  if st.done then return end
  st.done = true
  local accepted, reasons = {}, vim.empty_dict()
  for _, h in ipairs(st.hunks) do
    if st.verdict[h.index] == true and not none then
      table.insert(accepted, h.index)
    end
    if st.reasons[h.index] then
      reasons[tostring(h.index)] = st.reasons[h.index]
    end
  end
  local c = vim.lsp.get_client_by_id(st.client_id)
  if c then
    c:request("workspace/executeCommand", {
      command = "conductor.reviewDone",
      arguments = { { id = st.id, accepted = accepted, reasons = reasons, again = again } },
    }, function(err)
      if err then
        vim.notify("conductor: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      end
    end)
  end
  st.answer = { accepted = accepted, reasons = reasons, again = again }
  if vim.api.nvim_buf_is_valid(st.buf) then
    vim.api.nvim_buf_delete(st.buf, { force = true })
  end
end

--- Show a `conductor/review` notification's hunks in a review buffer.
function M.review(params, client_id)
  local st = {
    id = params.id, title = params.title or "fix", hunks = params.hunks or {},
    client_id = client_id, verdict = {}, reasons = {},
  }
  st.buf = vim.api.nvim_create_buf(false, true)
  vim.bo[st.buf].bufhidden = "wipe"
  vim.bo[st.buf].filetype = "diff"
  pcall(vim.api.nvim_buf_set_name, st.buf, "conductor://review/" .. st.id)
  render(st)
  local function set(v, reason)
    local h = hunk_here(st)
    if h == nil then return end
    st.verdict[h] = v
    st.reasons[h] = reason
    render(st)
  end
  local function map(key, fn)
    vim.keymap.set("n", key, fn, { buffer = st.buf, nowait = true, desc = M.review_keys[key] })
  end
  map("y", function() set(true, nil) end)
  map("n", function() set(false, nil) end)
  map("r", function()
    local h = hunk_here(st)
    if h == nil then return end
    vim.ui.input({ prompt = "Why not? " }, function(reason)
      if reason ~= nil then
        set(false, reason ~= "" and reason or nil)
      end
    end)
  end)
  map("a", function()
    for _, h in ipairs(st.hunks) do st.verdict[h.index] = true end
    render(st)
  end)
  map("d", function()
    for _, h in ipairs(st.hunks) do st.verdict[h.index] = false end
    render(st)
  end)
  map("<CR>", function() answer(st, false) end)
  map("t", function() answer(st, true) end)
  map("q", function() answer(st, false, true) end)
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = st.buf, once = true, callback = function() answer(st, false, true) end,
  })
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, st.buf)
  M.last_review = st
  return st
end

-- Candidates: the last fix job's answers, each with its worker, verdict, cost and diff. --
M.last_candidates = nil

--- List the last fix job's candidates in a buffer; <CR> (or `a`) applies the one under
--- the cursor (stale-safe, and :ConductorUndo brings back what the job left).
function M.candidates()
  local c = client()
  if not c then
    vim.notify("conductor: " .. M.why_not(), vim.log.levels.ERROR)
    return
  end
  c:request("workspace/executeCommand", { command = "conductor.showCandidates", arguments = { vim.empty_dict() } },
    function(err, result)
      if err or type(result) ~= "table" or #(result.candidates or {}) == 0 then
        vim.notify("conductor: no candidates to show", vim.log.levels.WARN)
        return
      end
      local lines, at = { "conductor: candidates of job " .. result.jobId .. " (<CR> or a: apply, q: close)" }, {}
      for _, cand in ipairs(result.candidates) do
        table.insert(lines, "")
        table.insert(lines, string.format("#%d %s  %s  %d tokens  $%.4f%s", cand.index, cand.label,
          cand.verdict, cand.tokens, cand.cost, cand.chosen and "  [applied by the job]" or ""))
        at[#lines] = cand
        for _, l in ipairs(vim.split(cand.diff or "", "\n", { trimempty = true })) do
          table.insert(lines, l)
          at[#lines] = cand
        end
      end
      local buf = vim.api.nvim_create_buf(false, true)
      vim.bo[buf].bufhidden = "wipe"
      vim.bo[buf].filetype = "diff"
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
      vim.bo[buf].modifiable = false
      local function apply()
        local cand = at[vim.api.nvim_win_get_cursor(0)[1]]
        if not cand then return end
        if not cand.applicable then
          vim.notify("conductor: candidate " .. cand.index .. " has nothing verified to apply", vim.log.levels.WARN)
          return
        end
        vim.api.nvim_buf_delete(buf, { force = true })
        exec("conductor.applyCandidate", { index = cand.index, jobId = result.jobId })
      end
      for _, key in ipairs({ "<CR>", "a" }) do
        vim.keymap.set("n", key, apply, { buffer = buf, nowait = true })
      end
      vim.keymap.set("n", "q", function() vim.api.nvim_buf_delete(buf, { force = true }) end,
        { buffer = buf, nowait = true })
      vim.cmd("botright split")
      vim.api.nvim_win_set_buf(0, buf)
      M.last_candidates = { buf = buf, at = at, result = result }
    end, 0)
end

--- The newest progress message of a running job, for a statusline.
function M.status()
  for _, msg in pairs(M.progress) do
    return msg
  end
  return ""
end

local function on_progress(ev)
  local data = ev.data or {}
  local value = (data.params or {}).value or {}
  local token = (data.params or {}).token
  if ev.data and ev.data.client_id then
    local c = vim.lsp.get_client_by_id(ev.data.client_id)
    if not c or c.name ~= "conductor" then
      return
    end
  end
  local msg = table.concat(vim.tbl_filter(function(s) return s and s ~= "" end,
    { value.title, value.message }), ": ")
  table.insert(M.messages, { kind = value.kind, message = msg })
  if value.kind == "end" then
    M.progress[token] = nil
  else
    M.progress[token] = msg
  end
  if M.config.notify_progress and msg ~= "" then
    vim.api.nvim_echo({ { "conductor: " .. msg } }, false, {})
  end
end

local function commands()
  local cmd = vim.api.nvim_create_user_command
  cmd("ConductorFix", function() M.fix() end, { desc = "Conductor: fix the problem on this line" })
  cmd("ConductorRewrite", function(o) M.rewrite(o.line1, o.line2, o.args) end,
    { range = true, nargs = "?", desc = "Conductor: implement / rewrite the selected lines" })
  cmd("ConductorFixTests", function() M.fix_tests() end, { desc = "Conductor: make the tests pass" })
  cmd("ConductorCancel", function() M.cancel() end, { desc = "Conductor: cancel running jobs" })
  cmd("ConductorUndo", function() M.undo() end, { desc = "Conductor: undo the last job" })
  cmd("ConductorPlan", function() M.plan() end, { desc = "Conductor: show the last plan" })
  cmd("ConductorCandidates", function() M.candidates() end,
    { desc = "Conductor: show the last fix job's candidates; apply another" })
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  local settings = M.config.settings
  if vim.tbl_isempty(settings) then
    settings = vim.empty_dict() -- an object, not a list, on the wire
  end
  local handlers = {
    ["conductor/review"] = function(_, params, ctx) M.review(params, ctx.client_id) end,
  }
  -- The review buffer answers `conductor/review`; without this the server asks nothing.
  local capabilities = vim.tbl_deep_extend("force", vim.lsp.protocol.make_client_capabilities(),
    { experimental = { conductorReview = true } })
  local spec = {
    cmd = M.config.cmd,
    handlers = handlers,
    capabilities = capabilities,
    filetypes = M.config.filetypes,
    root_markers = M.config.root_markers,
    init_options = settings,
    settings = { conductor = settings },
    on_init = function() M.last_exit = nil end,
    on_exit = function(code, signal) M.last_exit = { code = code, signal = signal } end,
  }
  vim.api.nvim_create_autocmd("LspProgress", { callback = on_progress })
  commands()
  if vim.fn.has("nvim-0.11") ~= 1 then
    vim.notify("conductor: Neovim 0.11 or newer is needed", vim.log.levels.ERROR)
    return
  end
  vim.lsp.config("conductor", spec)
  vim.lsp.enable("conductor")
end

return M
