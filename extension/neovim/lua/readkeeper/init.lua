-- readkeeper for Neovim: starts `python -m readkeeper serve` with vim.lsp for every file
-- buffer in a workspace, forwards vim.diagnostic changes to it, and offers commands and
-- a Lua API (read, edit, write, attachments, changes, stats, forget) for chat plugins.
--
-- Works on Neovim 0.7 through current: vim.lsp.start where it exists (0.8+), else
-- vim.lsp.start_client + vim.lsp.buf_attach_client.
--
-- What a user sees when something is wrong is a vim.notify message that says what
-- happened and what to do, never a raw Lua error: a server that does not start (the
-- reason from its stderr, and the fix), a file with no workspace (readkeeper never
-- takes "/" or the home folder as one), a command run where there is no file.

local M = {}

local uv = vim.uv or vim.loop

local defaults = {
  -- Command that starts the server. Default: { python, "-m", "readkeeper", "serve" }
  -- when `python` or $READKEEPER_PYTHON is set, else { "readkeeper", "serve" } when
  -- `readkeeper` is on PATH (pipx / uv tool install), else python3 -m readkeeper serve.
  cmd = nil,
  -- Python with readkeeper installed (e.g. a clone's .venv/bin/python).
  python = nil,
  -- Files or folders whose presence marks a workspace root (searched upwards from the
  -- file, stopping below "/" and the home folder). With none found, the file's own
  -- folder is the root, unless that is "/" or the home folder: then no server starts.
  root_markers = { ".git", "pyproject.toml", "package.json", "setup.py", "Cargo.toml", "go.mod" },
  -- function(path) -> root folder or nil, instead of root_markers; it may not return
  -- "/" or the home folder either.
  root_dir = nil,
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
local initialized = {} -- client id -> true once the server answered initialize
local failed = {} -- root -> true: its server did not start (retried by :ReadkeeperRestart)
local refused = {} -- folder -> true: told once that it gets no server
local last_file_buf = nil -- the last file buffer entered (commands run from elsewhere)
local diag_timer = nil
local pending_diag = {} -- bufnr -> true

-- --- helpers ---------------------------------------------------------------------------

local function has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

local function notify(msg, level)
  vim.notify("readkeeper: " .. msg, level or vim.log.levels.INFO)
end

local function realpath(path)
  return uv.fs_realpath(path) or path
end

-- "/" or the home folder: never a workspace (the server would watch and read the whole
-- disk or home: every dotfile and key without a prompt).
local function too_wide(dir)
  local real = realpath(dir)
  if real == "/" then
    return "/"
  end
  local home = vim.env.HOME
  if home and home ~= "" and real == realpath(home) then
    return "your home folder"
  end
  return nil
end

--- The workspace root of a file: its nearest folder, upwards, that holds a root marker
--- (markers in "/" or the home folder do not count: a dotfiles repository is not a
--- project), else the file's own folder. Returns nil and the reason when that would be
--- "/" or the home folder.
function M.root_for(path)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  if M.config.root_dir then
    local root = M.config.root_dir(path)
    if not root then
      return nil, "the `root_dir` function gave no root for it"
    end
    local wide = too_wide(root)
    if wide then
      return nil, "the `root_dir` function gave " .. wide .. ", never a workspace"
    end
    return vim.fn.fnamemodify(root, ":p"):gsub("(.)/$", "%1"), nil
  end
  local d = dir
  while d and d ~= "" and not too_wide(d) do
    for _, marker in ipairs(M.config.root_markers) do
      if uv.fs_stat(d .. "/" .. marker) then
        return d, nil
      end
    end
    local parent = vim.fn.fnamemodify(d, ":h")
    if parent == d then
      break
    end
    d = parent
  end
  local wide = too_wide(dir)
  if wide then
    return nil,
      string.format(
        "no root marker (%s) above it, and its folder is %s, which readkeeper never takes as a workspace",
        table.concat(M.config.root_markers, ", "),
        wide
      )
  end
  return dir, nil
end

-- The file a buffer holds, or nil and what the buffer is instead (for messages).
local function buffer_file(bufnr)
  if not bufnr or not vim.api.nvim_buf_is_valid(bufnr) then
    return nil, "no buffer"
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local buftype = vim.bo[bufnr].buftype
  if name:match("^readkeeper://") then
    return nil, "a readkeeper result"
  elseif buftype == "terminal" or name:match("^term://") then
    return nil, "a terminal"
  elseif buftype == "help" then
    return nil, "a help page"
  elseif buftype ~= "" then
    return nil, "a special buffer (" .. buftype .. ")"
  elseif name == "" then
    return nil, "an unnamed buffer"
  elseif name:match("^%w[%w+.-]*://") then
    return nil, "a " .. name:match("^(%w[%w+.-]*)://") .. ":// buffer, not a file on disk"
  end
  return name, nil
end

local function server_cmd()
  if M.config.cmd then
    return M.config.cmd
  end
  local python = M.config.python or vim.env.READKEEPER_PYTHON
  if not python and vim.fn.executable("readkeeper") == 1 then
    return { "readkeeper", "serve" }
  end
  return { python or "python3", "-m", "readkeeper", "serve" }
end

-- How to get a server, for the messages of a start that failed.
local INSTALL_HINT = "Install readkeeper (see extension/neovim/README.md): build its wheel and "
  .. "`pipx install dist/readkeeper-*.whl` (puts `readkeeper` on PATH, which the plugin uses), "
  .. 'or point the plugin at a clone\'s venv: setup({ python = "/path/to/readkeeper/.venv/bin/python" }).'

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

-- The server exited before it answered initialize. Neovim sends a server's stderr only
-- to its LSP log, where nobody looks; so the same command runs once more, with no input,
-- and what it writes to stderr (for a start that fails: the same reason) is shown with
-- the fix. A healthy server would exit at the end of its input; it is stopped after
-- 10 s in any case.
local function report_start_failure(cmd, root, code)
  local stderr = {}
  local function finish()
    local lines = {}
    for _, line in ipairs(stderr) do
      if line:match("%S") then
        table.insert(lines, line)
      end
    end
    -- A traceback ends with the reason; keep its last lines.
    local reason = table.concat(vim.list_slice(lines, math.max(1, #lines - 5)), "\n")
    local fix
    if reason:match("No module named '?readkeeper") then
      fix = "readkeeper is not installed for `" .. cmd[1] .. "`. " .. INSTALL_HINT
    else
      fix = "Fix what it says, or set `cmd` or `python` in require(\"readkeeper\").setup()."
    end
    notify(
      string.format(
        "the server did not start (`%s` exited with %s):\n%s\n%s\nThen :ReadkeeperRestart starts it again.",
        table.concat(cmd, " "),
        tostring(code),
        reason ~= "" and reason or "(it wrote nothing to stderr)",
        fix
      ),
      vim.log.levels.ERROR
    )
  end
  local ok, job = pcall(vim.fn.jobstart, cmd, {
    cwd = root,
    stderr_buffered = true,
    on_stderr = function(_, data)
      stderr = data or {}
    end,
    on_exit = function()
      vim.schedule(finish)
    end,
  })
  if not ok or job <= 0 then
    stderr = { tostring(job) }
    return finish()
  end
  vim.fn.chanclose(job, "stdin")
  vim.defer_fn(function()
    pcall(vim.fn.jobstop, job)
  end, 10000)
end

local function client_config(root)
  local settings = M.config.settings or {}
  local cmd = server_cmd()
  return {
    name = M.config.name,
    cmd = cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    init_options = settings,
    settings = { readkeeper = settings },
    -- Neovim answers workspace/configuration from `settings` (and pushes it once with
    -- workspace/didChangeConfiguration after initialize).
    handlers = { ["readkeeper/didChangeReadFiles"] = on_notice },
    on_init = function(client)
      initialized[client.id] = true
    end,
    on_exit = function(code, _, client_id)
      -- (a `cmd` given as a function, Neovim 0.10+, is not a command to run again)
      if code ~= 0 and not initialized[client_id] and not failed[root] and type(cmd) == "table" then
        failed[root] = true
        vim.schedule(function()
          report_start_failure(cmd, root, code)
        end)
      end
    end,
  }
end

--- Attach readkeeper to a buffer (starting the server for its workspace if needed).
--- Returns the client id, or nil (not a file, no workspace, or the server failed).
function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local name = buffer_file(bufnr)
  if not name then
    return nil
  end
  local root, why = M.root_for(name)
  if not root then
    local dir = vim.fn.fnamemodify(name, ":p:h")
    if not refused[dir] then
      refused[dir] = true
      notify(
        string.format(
          "not started for %s: %s. Open a file inside a project, mark the project's folder "
            .. "(e.g. `git init` there), or set `root_markers` or `root_dir` in "
            .. 'require("readkeeper").setup().',
          vim.fn.fnamemodify(name, ":~"),
          why
        ),
        vim.log.levels.WARN
      )
    end
    return nil
  end
  for _, client in ipairs(get_clients({ name = M.config.name })) do
    if client.config.root_dir == root and not (client.is_stopped and call(client, "is_stopped")) then
      vim.lsp.buf_attach_client(bufnr, client.id)
      return client.id
    end
  end
  if failed[root] then
    return nil -- reported once; :ReadkeeperRestart tries again
  end
  local cmd = server_cmd()
  if type(cmd) == "table" and vim.fn.executable(cmd[1]) ~= 1 then
    failed[root] = true
    notify(
      string.format("the server did not start: `%s` is not an executable on PATH. %s", cmd[1], INSTALL_HINT),
      vim.log.levels.ERROR
    )
    return nil
  end
  if vim.lsp.start then
    return vim.lsp.start(client_config(root), { bufnr = bufnr })
  end
  local id = client_ids[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(client_config(root))
    if not id then
      notify("could not start " .. table.concat(cmd, " "), vim.log.levels.ERROR)
      return nil
    end
    client_ids[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- The readkeeper client for a buffer's workspace (default: the current buffer; for a
--- window without a file, such as an unnamed buffer, a result, a terminal or help, the
--- file buffer entered last), or the first one running.
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local name = buffer_file(bufnr) or buffer_file(last_file_buf)
  local clients = get_clients({ name = M.config.name })
  local root = name and M.root_for(name)
  if root then
    for _, client in ipairs(clients) do
      if client.config.root_dir == root then
        return client
      end
    end
  end
  return clients[1]
end

-- The client whose workspace holds an absolute path (the deepest root), else nil.
local function client_for_path(path)
  local best, best_len = nil, -1
  for _, client in ipairs(get_clients({ name = M.config.name })) do
    local root = client.config.root_dir
    if root and (path == root or path:sub(1, #root + 1) == root .. "/") and #root > best_len then
      best, best_len = client, #root
    end
  end
  return best
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

local NOT_RUNNING = "readkeeper is not running: open a file inside a project (a folder with a "
  .. "root marker such as .git) and it starts for that workspace"

--- Send a readkeeper/* request; callback(err, result). err is the JSON-RPC error
--- ({code, message, data = {kind, ...}}) or nil. The server is the one of `bufnr`'s
--- workspace (see M.client), or `client` when given.
function M.request(method, params, callback, bufnr, client)
  client = client or M.client(bufnr)
  callback = callback or function() end
  if not client then
    callback({ code = -32803, message = NOT_RUNNING, data = { kind = "not_running" } }, nil)
    return false
  end
  params = params or {}
  if params.session == nil then
    params.session = M.config.session
  end
  -- The buffer goes along only when it is attached (Neovim flushes its pending changes
  -- first); a result window, a terminal or help has nothing to flush.
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if not vim.lsp.buf_is_attached(bufnr, client.id) then
    bufnr = nil
  end
  return call(client, "request", method, params, function(err, result)
    callback(err, result)
  end, bufnr)
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
  if type(err) ~= "table" then
    return notify(tostring(err), vim.log.levels.ERROR)
  end
  local kind = err.data and err.data.kind and (err.data.kind .. ": ") or ""
  notify(kind .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
end

-- A command's body, and the callback that shows its answer, run guarded: a fault in the
-- plugin is one message naming the command, not a Lua traceback in the user's face.
local function guarded(name, fn)
  return function(arg)
    local ok, problem = xpcall(function()
      return fn(arg)
    end, debug.traceback)
    if not ok then
      notify(
        string.format(
          "%s failed: %s (a bug in the plugin: please report it with this message)",
          name,
          tostring(problem):match("^[^\n]*")
        ),
        vim.log.levels.ERROR
      )
    end
  end
end

-- The answer of a command's request, shown on the main loop.
local function on_answer(name, show_result)
  return function(err, result)
    vim.schedule(guarded(name, function()
      if err then
        return report_error(err)
      end
      show_result(result)
    end))
  end
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

--- The file a :ReadkeeperRead argument names: relative to the current directory
--- (:pwd), as the command's completion offers it; `~` and `%` (the current file) work
--- as in :edit.
function M.resolve_path(arg)
  arg = arg:gsub("\\ ", " ") -- completion escapes spaces
  if arg == "%" or arg == "#" then
    return vim.fn.expand(arg .. ":p")
  end
  return vim.fn.fnamemodify(arg, ":p")
end

local function cmd_read(opts)
  local path
  if opts.args ~= "" then
    path = M.resolve_path(opts.args)
  else
    local what
    path, what = buffer_file(vim.api.nvim_get_current_buf())
    if not path then
      return notify(
        string.format(
          "this window shows %s, not a file: name one, e.g. :ReadkeeperRead src/app.py "
            .. "(relative to the current directory, %s)",
          what,
          vim.fn.fnamemodify(vim.fn.getcwd(), ":~")
        ),
        vim.log.levels.WARN
      )
    end
  end
  local client = client_for_path(path) or M.client()
  if not client then
    return notify(NOT_RUNNING, vim.log.levels.WARN)
  end
  M.request("readkeeper/read", { file_path = path, force = opts.bang or nil }, on_answer(":ReadkeeperRead", function(result)
    show("read", M.result_lines(result))
  end), nil, client)
end

local function cmd_changes()
  M.changes({}, on_answer(":ReadkeeperChanges", function(result)
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
  end))
end

local function cmd_stats()
  M.stats({}, on_answer(":ReadkeeperStats", function(result)
    show("stats", vim.split(vim.inspect(result), "\n", { plain = true }))
  end))
end

--- Stop every readkeeper server, forget failed starts and refused folders, and attach
--- the loaded file buffers again (after installing readkeeper or changing setup()).
function M.restart()
  local clients = get_clients({ name = M.config.name })
  for _, client in ipairs(clients) do
    vim.lsp.stop_client(client.id)
  end
  failed, refused, client_ids = {}, {}, {}
  -- A stopping client still counts as running for a moment (and vim.lsp.start would
  -- reuse it): attach once they are gone, polling without blocking the editor.
  local deadline = uv.now() + 30000
  local function reattach()
    if #get_clients({ name = M.config.name }) > 0 and uv.now() < deadline then
      return vim.defer_fn(reattach, 50)
    end
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        M.attach(bufnr)
      end
    end
  end
  reattach()
end

-- --- setup -------------------------------------------------------------------------------

function M.setup(opts)
  opts = opts or {}
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts)
  -- Lists replace the default, not merge into it by index.
  M.config.root_markers = opts.root_markers or M.config.root_markers
  -- A new configuration may fix what failed or was refused: try those again.
  failed, refused = {}, {}
  local group = vim.api.nvim_create_augroup("readkeeper", { clear = true })
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(args)
      if buffer_file(args.buf) then
        last_file_buf = args.buf
      end
    end,
  })
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
  -- Completion offers paths relative to the current directory, and M.resolve_path
  -- reads them the same way.
  vim.api.nvim_create_user_command("ReadkeeperRead", guarded(":ReadkeeperRead", cmd_read), {
    nargs = "?",
    bang = true,
    complete = "file",
    desc = "readkeeper: read a file as the agent would (! forces past the stub)",
  })
  vim.api.nvim_create_user_command(
    "ReadkeeperChanges",
    guarded(":ReadkeeperChanges", cmd_changes),
    { desc = "readkeeper: files read that changed since" }
  )
  vim.api.nvim_create_user_command("ReadkeeperStats", guarded(":ReadkeeperStats", cmd_stats), { desc = "readkeeper: stats" })
  vim.api.nvim_create_user_command(
    "ReadkeeperRestart",
    guarded(":ReadkeeperRestart", M.restart),
    { desc = "readkeeper: restart the servers (after installing readkeeper or a failed start)" }
  )
  return M
end

return M
