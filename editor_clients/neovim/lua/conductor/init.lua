-- conductor.nvim: Neovim front end for the conductor-lsp language server.
local M = {}

M.defaults = {
  -- How to start the server; the first element must be executable.
  cmd = { "conductor-lsp", "serve" },
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

local function client()
  local clients = vim.lsp.get_clients({ name = "conductor", bufnr = 0 })
  if #clients == 0 then
    clients = vim.lsp.get_clients({ name = "conductor" })
  end
  return clients[1]
end

local function exec(command, args)
  local c = client()
  if not c then
    vim.notify("conductor: the server is not running for this buffer", vim.log.levels.ERROR)
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
  exec("conductor.fix", { uri = vim.uri_from_bufnr(0), range = line_range(lnum, lnum), diagnostics = diags })
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
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  local settings = M.config.settings
  if vim.tbl_isempty(settings) then
    settings = vim.empty_dict() -- an object, not a list, on the wire
  end
  local spec = {
    cmd = M.config.cmd,
    filetypes = M.config.filetypes,
    root_markers = M.config.root_markers,
    init_options = settings,
    settings = { conductor = settings },
  }
  vim.api.nvim_create_autocmd("LspProgress", { callback = on_progress })
  commands()
  if vim.lsp.config and vim.lsp.enable then -- Neovim 0.11+
    vim.lsp.config("conductor", spec)
    vim.lsp.enable("conductor")
  else
    vim.api.nvim_create_autocmd("FileType", {
      callback = function(args)
        local root = vim.fs.root(args.buf, M.config.root_markers) or vim.fn.getcwd()
        vim.lsp.start({
          name = "conductor",
          cmd = M.config.cmd,
          root_dir = root,
          init_options = settings,
          settings = { conductor = settings },
        }, { bufnr = args.buf })
      end,
    })
  end
end

return M
