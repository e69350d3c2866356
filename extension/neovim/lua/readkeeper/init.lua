-- readkeeper for Neovim: starts `python -m readkeeper serve` with vim.lsp for every file
-- buffer in a workspace, forwards vim.diagnostic changes to it, and offers commands and
-- a Lua API (read, edit, write, attachments, changes, stats, forget) for chat plugins.
--
-- Works on Neovim 0.7 through current: vim.lsp.start where it exists (0.8+), else
-- vim.lsp.start_client + vim.lsp.buf_attach_client.

local M = {}

local uv = vim.uv or vim.loop

local defaults = {
  -- Command that starts the server; default { python, "-m", "readkeeper", "serve" }.
  cmd = nil,
  -- Python with readkeeper installed; default $READKEEPER_PYTHON, else "python3".
  python = nil,
  -- Files or folders whose presence marks a workspace root (searched upwards).
  root_markers = { ".git", "pyproject.toml", "package.json", "setup.py", "Cargo.toml", "go.mod" },
  -- Server settings (README "Settings"), sent as initializationOptions and answered
  -- through workspace/configuration (section "readkeeper").
  settings = {},
  -- readkeeper session used by the commands and by the API when opts.session is nil.
  session = "nvim",
  -- Forward vim.diagnostic changes (every source) to readkeeper/didChangeDiagnostics.
  forward_diagnostics = true,
  debounce_ms = 200,
  max_diagnostics_per_file = 200,
  -- Called with the params of each readkeeper/didChangeReadFiles notice; the default
  -- echoes one quiet line (no popup).
  on_notice = nil,
  -- Attach to buffers automatically (BufReadPost/BufNewFile); false: call attach().
  autostart = true,
  name = "readkeeper",
}

M.config = vim.deepcopy(defaults)
M.notices = {} -- every didChangeReadFiles notice received, newest last

local client_ids = {} -- root_dir -> client id (used where vim.lsp.start is absent)
local diag_timer = nil
local pending_diag = {} -- bufnr -> true

-- --- helpers ---------------------------------------------------------------------------

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

local function notify(msg, level)
  vim.notify("readkeeper: " .. msg, level or vim.log.levels.INFO)
end

local function find_root(path)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  while dir and dir ~= "" do
    for _, marker in ipairs(M.config.root_markers) do
      if uv.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.getcwd()
end

local function server_cmd()
  if M.config.cmd then
    return M.config.cmd
  end
  local python = M.config.python or vim.env.READKEEPER_PYTHON or "python3"
  return { python, "-m", "readkeeper", "serve" }
end

local function call(client, method, ...)
  -- Neovim 0.11 made client methods take self (client:request); older ones do not.
  if has("0.11") then
    return client[method](client, ...)
  end
  return client[method](...)
end

local function get_clients(filter)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients(filter)
  end
  local clients = {}
  for _, client in pairs(vim.lsp.get_active_clients()) do
    if not filter or not filter.name or client.name == filter.name then
      table.insert(clients, client)
    end
  end
  return clients
end

-- --- notices -----------------------------------------------------------------------------

local function on_notice(_, params)
  -- Neovim 0.7-0.11 call notification handlers as (err, result, ctx, config).
  table.insert(M.notices, params)
  if M.config.on_notice then
    M.config.on_notice(params)
    return
  end
  local files = {}
  for _, change in ipairs((params and params.changes) or {}) do
    table.insert(files, vim.fn.fnamemodify(change.file_path or "?", ":~:.") .. " (" .. (change.kind or "changed") .. ")")
  end
  if #files > 0 then
    vim.schedule(function()
      vim.api.nvim_echo({ { "readkeeper: changed since the agent read it: " .. table.concat(files, ", "), "Comment" } }, false, {})
    end)
  end
end

-- --- starting and attaching --------------------------------------------------------------

local function client_config(root)
  local settings = M.config.settings or {}
  return {
    name = M.config.name,
    cmd = server_cmd(),
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    init_options = settings,
    settings = { readkeeper = settings },
    -- Neovim answers workspace/configuration from `settings` (and pushes it once with
    -- workspace/didChangeConfiguration after initialize).
    handlers = { ["readkeeper/didChangeReadFiles"] = on_notice },
  }
end

--- Attach readkeeper to a buffer (starting the server for its workspace if needed).
function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%w+://") then
    return nil
  end
  local root = find_root(name)
  if vim.lsp.start then
    return vim.lsp.start(client_config(root), { bufnr = bufnr })
  end
  local id = client_ids[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(client_config(root))
    if not id then
      notify("could not start " .. table.concat(server_cmd(), " "), vim.log.levels.ERROR)
      return nil
    end
    client_ids[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- The readkeeper client for a buffer's workspace (default: the current buffer), or
--- the first one running.
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  local clients = get_clients({ name = M.config.name })
  if name ~= "" then
    local root = find_root(name)
    for _, client in ipairs(clients) do
      if client.config.root_dir == root then
        return client
      end
    end
  end
  return clients[1]
end

-- --- diagnostics forwarding --------------------------------------------------------------

local function to_lsp(d)
  local item = {
    range = {
      start = { line = d.lnum, character = d.col },
      ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
    },
    severity = d.severity,
    message = d.message,
    source = d.source,
  }
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  if code ~= nil then
    item.code = code
  end
  return item
end

--- The didChangeDiagnostics item of a buffer: every source's diagnostics, errors first.
function M.diagnostics_item(bufnr)
  local diagnostics = vim.diagnostic.get(bufnr)
  table.sort(diagnostics, function(a, b)
    if a.severity ~= b.severity then
      return a.severity < b.severity
    end
    return a.lnum < b.lnum
  end)
  local items = {}
  for i, d in ipairs(diagnostics) do
    if i > M.config.max_diagnostics_per_file then
      break
    end
    table.insert(items, to_lsp(d))
  end
  local item = { uri = vim.uri_from_bufnr(bufnr), diagnostics = items }
  local versions = vim.lsp.util.buf_versions
  local version = versions and versions[bufnr]
  if version == nil and vim.api.nvim_buf_is_loaded(bufnr) then
    version = vim.api.nvim_buf_get_changedtick(bufnr)
  end
  item.version = version
  return item
end

local function flush_diagnostics()
  local items = {}
  for bufnr in pairs(pending_diag) do
    if vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_get_name(bufnr) ~= "" then
      table.insert(items, M.diagnostics_item(bufnr))
    end
  end
  pending_diag = {}
  if #items == 0 then
    return
  end
  for _, client in ipairs(get_clients({ name = M.config.name })) do
    call(client, "notify", "readkeeper/didChangeDiagnostics", { items = items })
  end
end

local function on_diagnostic_changed(args)
  local bufnr = args and args.buf or vim.api.nvim_get_current_buf()
  pending_diag[bufnr] = true
  if not diag_timer then
    diag_timer = uv.new_timer()
  end
  diag_timer:stop()
  diag_timer:start(M.config.debounce_ms, 0, vim.schedule_wrap(flush_diagnostics))
end

--- Send pending diagnostics now (tests; before asking for attachments).
M.flush_diagnostics = flush_diagnostics

-- --- the Lua API -------------------------------------------------------------------------

--- Send a readkeeper/* request; callback(err, result). err is the JSON-RPC error
--- ({code, message, data = {kind, ...}}) or nil.
function M.request(method, params, callback, bufnr)
  local client = M.client(bufnr)
  callback = callback or function() end
  if not client then
    callback({ code = -32803, message = "readkeeper is not running for this workspace", data = { kind = "not_running" } }, nil)
    return false
  end
  params = params or {}
  if params.session == nil then
    params.session = M.config.session
  end
  return call(client, "request", method, params, function(err, result)
    callback(err, result)
  end, bufnr or vim.api.nvim_get_current_buf())
end

local function merge(base, opts)
  return vim.tbl_extend("force", base, opts or {})
end

--- read(path, {offset, limit, pages, force, session}, callback(err, result))
function M.read(path, opts, callback)
  return M.request("readkeeper/read", merge({ file_path = path }, opts), callback)
end

--- edit(path, old_string, new_string, {replace_all, session}, callback(err, result))
function M.edit(path, old_string, new_string, opts, callback)
  local params = merge({ file_path = path, old_string = old_string, new_string = new_string }, opts)
  return M.request("readkeeper/edit", params, callback)
end

--- write(path, content, {session}, callback(err, result))
function M.write(path, content, opts, callback)
  return M.request("readkeeper/write", merge({ file_path = path, content = content }, opts), callback)
end

--- The active window's file and visual selection, as attachments take them.
function M.active_editor()
  local bufnr = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local editor = { file_path = name }
  local mode = vim.fn.mode()
  if mode == "v" or mode == "V" or mode == "\22" then
    local a, b = vim.fn.getpos("v"), vim.fn.getpos(".")
    if a[2] > b[2] or (a[2] == b[2] and a[3] > b[3]) then
      a, b = b, a
    end
    editor.selection = {
      start = { line = a[2] - 1, character = a[3] - 1 },
      ["end"] = { line = b[2] - 1, character = b[3] },
    }
  end
  return editor
end

--- attachments({budget_tokens, types, mentions, session, active_editor}, callback)
function M.attachments(opts, callback)
  opts = opts or {}
  if opts.active_editor == nil then
    opts.active_editor = M.active_editor()
  end
  flush_diagnostics()
  return M.request("readkeeper/attachments", opts, callback)
end

function M.changes(opts, callback)
  return M.request("readkeeper/changes", opts or {}, callback)
end

function M.stats(opts, callback)
  return M.request("readkeeper/stats", opts or {}, callback)
end

function M.forget(opts, callback)
  return M.request("readkeeper/forget", opts or {}, callback)
end

-- --- commands ----------------------------------------------------------------------------

local function show(title, lines)
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, "readkeeper://" .. title .. "/" .. buf)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  return buf
end

local function report_error(err)
  local kind = err.data and err.data.kind and (err.data.kind .. ": ") or ""
  notify(kind .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
end

--- The lines a read result shows (text, stub, or a summary of other kinds).
function M.result_lines(result)
  local file = result.file or {}
  if result.type == "text" then
    local lines = vim.split(file.content or "", "\n", { plain = true })
    if file.partial and file.next_offset then
      table.insert(lines, string.format("[partial: continue with offset %d]", file.next_offset))
    end
    return lines
  elseif result.type == "file_unchanged" then
    return { "[file unchanged since this session read it: " .. (file.file_path or "?") .. "]" }
  elseif result.type == "pdf" then
    return vim.split(file.content or "", "\n", { plain = true })
  end
  return vim.split(vim.inspect(result), "\n", { plain = true })
end

local function cmd_read(opts)
  local path = opts.args ~= "" and opts.args or vim.api.nvim_buf_get_name(0)
  M.read(path, { force = opts.bang or nil }, function(err, result)
    vim.schedule(function()
      if err then
        return report_error(err)
      end
      show("read", M.result_lines(result))
    end)
  end)
end

local function cmd_changes()
  M.changes({}, function(err, result)
    vim.schedule(function()
      if err then
        return report_error(err)
      end
      local lines = {}
      for _, change in ipairs(result.changes or {}) do
        table.insert(lines, string.format("%s: %s", change.file_path, change.kind))
        for _, line in ipairs(vim.split(change.diff or "", "\n", { plain = true })) do
          table.insert(lines, "  " .. line)
        end
      end
      if #lines == 0 then
        lines = { "No file read in this session has changed since." }
      end
      show("changes", lines)
    end)
  end)
end

local function cmd_stats()
  M.stats({}, function(err, result)
    vim.schedule(function()
      if err then
        return report_error(err)
      end
      show("stats", vim.split(vim.inspect(result), "\n", { plain = true }))
    end)
  end)
end

-- --- setup -------------------------------------------------------------------------------

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  local group = vim.api.nvim_create_augroup("readkeeper", { clear = true })
  if M.config.autostart then
    vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
      group = group,
      callback = function(args)
        M.attach(args.buf)
      end,
    })
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        M.attach(bufnr)
      end
    end
  end
  if M.config.forward_diagnostics then
    vim.api.nvim_create_autocmd("DiagnosticChanged", { group = group, callback = on_diagnostic_changed })
  end
  vim.api.nvim_create_user_command("ReadkeeperRead", cmd_read, {
    nargs = "?",
    bang = true,
    complete = "file",
    desc = "readkeeper: read a file as the agent would (! forces past the stub)",
  })
  vim.api.nvim_create_user_command("ReadkeeperChanges", cmd_changes, { desc = "readkeeper: files read that changed since" })
  vim.api.nvim_create_user_command("ReadkeeperStats", cmd_stats, { desc = "readkeeper: stats" })
  return M
end

return M
