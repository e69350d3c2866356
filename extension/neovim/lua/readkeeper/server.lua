-- Starting readkeeper for a workspace and finding the running one: one server per
-- workspace root, with vim.lsp.start where it exists (0.8+), else vim.lsp.start_client
-- + vim.lsp.buf_attach_client. A server that does not start is reported once, with the
-- reason from its stderr and the fix; :ReadkeeperRestart (or setup()) tries again.

local config = require("readkeeper.config")
local render = require("readkeeper.render")
local roots = require("readkeeper.roots")
local util = require("readkeeper.util")

local notify, call, get_clients = util.notify, util.call, util.get_clients

local M = {}

M.notices = {} -- every didChangeReadFiles notice received, newest last

local client_ids = {} -- root_dir -> client id (used where vim.lsp.start is absent)
local initialized = {} -- client id -> true once the server answered initialize
local failed = {} -- root -> true: its server did not start (retried by :ReadkeeperRestart)
local refused = {} -- folder -> true: told once that it gets no server
local last_file_buf = nil -- the last file buffer entered (commands run from elsewhere)

M.NOT_RUNNING = "readkeeper is not running: open a file inside a project (a folder with a "
  .. "root marker such as .git) and it starts for that workspace"

--- A new configuration may fix what failed or was refused: try those again.
function M.forget_failures()
  failed, refused = {}, {}
end

--- Remember `bufnr` as the file buffer entered last, when it holds a file.
function M.entered(bufnr)
  if roots.buffer_file(bufnr) then
    last_file_buf = bufnr
  end
end

local function configured_cmd()
  if config.current.cmd then
    return config.current.cmd
  end
  local python = config.current.python or vim.env.READKEEPER_PYTHON
  if not python and util.on_path("readkeeper") then
    return { "readkeeper", "serve" }
  end
  -- -P: the server runs in the workspace, and `-m` would put that folder first on
  -- sys.path, so a repository's own `readkeeper` package would be what runs.
  return { python or "python3", "-P", "-m", "readkeeper", "serve" }
end

-- The command, its program named by absolute path when found on PATH: the server runs
-- in the workspace, whose own `python3` an empty PATH entry would otherwise pick.
local function server_cmd()
  local cmd = configured_cmd()
  if type(cmd) ~= "table" then
    return cmd
  end
  local found = util.on_path(cmd[1])
  if found then
    cmd = vim.list_extend({ found }, cmd, 2)
  end
  return cmd
end

-- How to get a server, for the messages of a start that failed.
local INSTALL_HINT = "Install readkeeper (see extension/neovim/README.md): build its wheel and "
  .. "`pipx install dist/readkeeper-*.whl` (puts `readkeeper` on PATH, which the plugin uses), "
  .. 'or point the plugin at a clone\'s venv: setup({ python = "/path/to/readkeeper/.venv/bin/python" }).'

-- --- notices -----------------------------------------------------------------------------

local function on_notice(_, params)
  -- Neovim 0.7-0.11 call notification handlers as (err, result, ctx, config).
  table.insert(M.notices, params)
  if config.current.on_notice then
    config.current.on_notice(params)
    return
  end
  local line = render.notice_line(params)
  if line then
    vim.schedule(function()
      vim.api.nvim_echo({ { line, "Comment" } }, false, {})
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
  local settings = config.current.settings or {}
  local cmd = server_cmd()
  return {
    name = config.current.name,
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
  local name = roots.buffer_file(bufnr)
  if not name then
    return nil
  end
  local root, why = roots.root_for(name)
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
  for _, client in ipairs(get_clients({ name = config.current.name })) do
    if client.config.root_dir == root and not (client.is_stopped and call(client, "is_stopped")) then
      vim.lsp.buf_attach_client(bufnr, client.id)
      return client.id
    end
  end
  if failed[root] then
    return nil -- reported once; :ReadkeeperRestart tries again
  end
  require("readkeeper.reload").watch(bufnr, name)
  local cmd = server_cmd()
  if type(cmd) == "table" and not util.on_path(cmd[1]) then
    failed[root] = true
    notify(
      string.format("the server did not start: %s. %s", util.why_not_runnable(cmd[1]), INSTALL_HINT),
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
  local name = roots.buffer_file(bufnr) or roots.buffer_file(last_file_buf)
  local clients = get_clients({ name = config.current.name })
  local root = name and roots.root_for(name)
  if root then
    for _, client in ipairs(clients) do
      if client.config.root_dir == root then
        return client
      end
    end
  end
  return clients[1]
end

--- The client whose workspace holds an absolute path (the deepest root), else nil.
function M.client_for_path(path)
  local best, best_len = nil, -1
  for _, client in ipairs(get_clients({ name = config.current.name })) do
    local root = client.config.root_dir
    if root and (path == root or path:sub(1, #root + 1) == root .. "/") and #root > best_len then
      best, best_len = client, #root
    end
  end
  return best
end

--- Stop every readkeeper server, forget failed starts and refused folders, and attach
--- the buffers again (after installing readkeeper or changing setup()): with autostart,
--- every loaded file buffer; without it, only those that were attached (the user chose
--- them with attach()).
function M.restart()
  -- Every server: those running, and (Neovim 0.7, which lists a client only once it is
  -- initialized) those still starting, which this plugin keeps by root.
  local ids = {}
  for _, client in ipairs(get_clients({ name = config.current.name })) do
    ids[client.id] = true
  end
  for _, id in pairs(client_ids) do
    ids[id] = true
  end
  local attached = {}
  local count = vim.tbl_count(ids)
  notify(count == 0 and "no server was running: starting the servers for the open buffers"
    or string.format("restarting %d %s", count, count == 1 and "server" or "servers"))
  for id in pairs(ids) do
    vim.list_extend(attached, vim.lsp.get_buffers_by_client_id(id))
    vim.lsp.stop_client(id)
  end
  failed, refused, client_ids = {}, {}, {}
  -- A stopping client still counts as running for a moment (and vim.lsp.start would
  -- reuse it): attach once those stopped are gone, polling without blocking the editor.
  local deadline = util.uv.now() + 30000
  local function stopping()
    for id in pairs(ids) do
      if vim.lsp.get_client_by_id(id) ~= nil then
        return true
      end
    end
    return false
  end
  local function reattach()
    if stopping() and util.uv.now() < deadline then
      return vim.defer_fn(reattach, 50)
    end
    -- Counted from what attach returned: a client Neovim 0.11 is still starting may not
    -- be listed yet.
    local started = 0
    if config.current.autostart then
      started = M.attach_loaded()
    else
      for _, bufnr in ipairs(attached) do
        if vim.api.nvim_buf_is_loaded(bufnr) and M.attach(bufnr) then
          started = started + 1
        end
      end
    end
    notify(started > 0 and "stopped; starting again for the open buffers (a failure is reported here)"
      or "stopped; no open buffer is in a workspace, so none started")
  end
  reattach()
end

--- Attach every loaded buffer (at setup, and after a restart).
function M.attach_loaded()
  local attached = 0
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and M.attach(bufnr) then
      attached = attached + 1
    end
  end
  return attached
end

return M
