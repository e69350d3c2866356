-- Run by tests/test_neovim.py in real headless Neovim:
--   nvim --headless -u NONE -i NONE -n --cmd "set rtp^=extension/neovim" -c "luafile THIS"
-- Environment: READKEEPER_TEST_ROOT (a workspace with app.py, lib.py, pkg/mod.py),
-- NVIM_TEST_LOOSE (a folder with no root marker above it, holding note.txt),
-- NVIM_TEST_BROKEN (a workspace with main.py, for a server that cannot start),
-- HOME (a throwaway home folder holding todo.txt, and notes/idea.txt under a .git),
-- READKEEPER_TEST_OUT (where the results go, as JSON), READKEEPER_PYTHON.
-- Each check is recorded as {name, ok, detail}; the script always quits.

local root = assert(os.getenv("READKEEPER_TEST_ROOT"))
local loose = assert(os.getenv("NVIM_TEST_LOOSE"))
local broken = assert(os.getenv("NVIM_TEST_BROKEN"))
local home = assert(os.getenv("HOME"))
local python = assert(os.getenv("READKEEPER_PYTHON"))
local out = assert(os.getenv("READKEEPER_TEST_OUT"))
local results = {}

-- Deadlines (every wait polls and ends as soon as its condition holds): a server's start
-- and a request's answer, generous for a busy two-core machine.
local START_MS = 60000
local ANSWER_MS = 15000

-- Every vim.notify message, as the user would see it (and still shown).
local notified = {}
local original_notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(notified, tostring(msg))
  return original_notify(msg, level, opts)
end

local function notified_since(mark, text)
  for i = mark + 1, #notified do
    if notified[i]:find(text, 1, true) then
      return notified[i]
    end
  end
  return nil
end

local function check(name, ok, detail)
  table.insert(results, { name = name, ok = ok and true or false, detail = detail and vim.inspect(detail) or "" })
  return ok
end

local function all_clients()
  return (vim.lsp.get_clients or vim.lsp.get_active_clients)()
end

local function await(fn, timeout)
  local done, err, result = false, nil, nil
  fn(function(e, r)
    done, err, result = true, e, r
  end)
  vim.wait(timeout or ANSWER_MS, function()
    return done
  end, 20)
  if not done then
    return { message = "timed out" }, nil
  end
  return err, result
end

-- render.lua on hand-made results: every field a result carries reaches the lines, and
-- no base64 ever does.
local function render_checks()
  local render = require("readkeeper.render")
  local function lines_check(name, got, expected)
    check(name, vim.deep_equal(got, expected), { got = got, expected = expected })
  end

  lines_check("changes: moved, truncated, note, and what is left", render.changes_lines({
    changes = {
      { file_path = "/ws/a.py", kind = "modified", diff = "-x\n+y", truncated = true, note = "long lines cut", total_lines = 1 },
      { file_path = "/ws/b.py", kind = "moved", new_path = "/ws/c.py", diff = "", truncated = false },
    },
    remaining = 3,
  }), {
    "/ws/a.py: modified (diff truncated: re-read the file)",
    "  note: long lines cut",
    "  -x",
    "  +y",
    "/ws/b.py -> /ws/c.py: moved",
    "3 more changed files: run :ReadkeeperChanges again to see them",
  })
  lines_check("changes: none", render.changes_lines({ changes = {} }), { "No file read in this session has changed since." })

  local function text(extra)
    return { type = "text", file = vim.tbl_extend("force", {
      file_path = "/ws/a.py", content = "     1\tone\n     2\ttwo", start_line = 1, num_lines = 2,
      total_lines = 10, tokens = 4, partial = false,
    }, extra or {}) }
  end
  lines_check("read: text is its numbered lines", render.read_lines(text()), { "     1\tone", "     2\ttwo" })
  lines_check("read: text that is unsaved, partial, with a note", render.read_lines(text({
    unsaved = true, buffer_version = 4, partial = true, next_offset = 3, note = "2 long lines cut",
  })), {
    "     1\tone",
    "     2\ttwo",
    "[UNSAVED editor buffer (version 4), not the file on disk]",
    "[lines 1-2 of 10; more: read with offset=3]",
    "note: 2 long lines cut",
  })
  lines_check("read: file_unchanged with its note", render.read_lines({
    type = "file_unchanged", file = { file_path = "/ws/a.py", note = "held since turn 2" },
  }), {
    "file_unchanged: /ws/a.py, what you got, from your read; :ReadkeeperRead! reads it again.",
    "note: held since turn 2",
  })
  lines_check("read: file_unchanged names the lines held and what changed around them", render.read_lines({
    type = "file_unchanged", file = {
      file_path = "/ws/a.py", start_line = 103, num_lines = 50, total_lines = 403,
      obtained_by = "read", changed_outside = "before", previous_start_line = 100,
    },
  }), {
    "file_unchanged: /ws/a.py, lines 103-152 of 403, from your read (were lines 100-149); "
      .. "the file changed before them; :ReadkeeperRead! reads it again.",
  })
  lines_check("read: file_unchanged after the session's write says so", render.read_lines({
    type = "file_unchanged", file = {
      file_path = "/ws/a.py", start_line = 1, num_lines = 12, total_lines = 12,
      obtained_by = "write", obtained_at = "2026-12-04T21:40:03Z",
    },
  }), {
    "file_unchanged: /ws/a.py, lines 1-12 of 12, exactly as your write left them at "
      .. "2026-12-04T21:40:03Z; :ReadkeeperRead! reads it again.",
  })
  lines_check("read: a notebook range says which cells it shows", render.read_lines({
    type = "notebook", file = {
      file_path = "/ws/a.ipynb", total_cells = 12, partial = false,
      cells = { { cell_id = "x7f", index = 2, cell_type = "code", source = "a" } },
    },
  })[1], "/ws/a.ipynb: notebook, cell 3 of 12")
  lines_check("read: a notebook cut short goes on with the images asked for", render.read_lines({
    type = "notebook", file = {
      file_path = "/ws/a.ipynb", total_cells = 60, partial = true, next_offset = 12, include_images = true, cells = {},
    },
  }), {
    "/ws/a.ipynb: notebook, 60 cells; more: read with offset=12, include_images=true",
  })
  lines_check("read: file_unchanged of a PDF names the pages held", render.read_lines({
    type = "file_unchanged", file = {
      file_path = "/ws/a.pdf", held_type = "pdf", shown_pages = "2-3", page_count = 40, obtained_by = "read",
    },
  }), {
    "file_unchanged: /ws/a.pdf, pages 2-3 of 40 as text, from your read; :ReadkeeperRead! reads it again.",
  })
  lines_check("read: file_unchanged of a notebook names the cells held", render.read_lines({
    type = "file_unchanged", file = {
      file_path = "/ws/a.ipynb", held_type = "notebook", first_cell = 3, num_cells = 2, total_cells = 12,
      include_images = false, obtained_by = "read",
    },
  }), {
    "file_unchanged: /ws/a.ipynb, cells 3-4 of 12, with outputs (images as placeholders), "
      .. "from your read; :ReadkeeperRead! reads it again.",
  })
  lines_check("read: file_unchanged of an image names what was sent", render.read_lines({
    type = "file_unchanged", file = {
      file_path = "/ws/a.png", held_type = "image", display_width = 1568, display_height = 980,
      original_width = 2880, original_height = 1800, tokens = 2049, obtained_by = "read",
    },
  }), {
    "file_unchanged: /ws/a.png, the image as sent (1568x980, from 2880x1800, 2049 tokens), from your read; "
      .. ":ReadkeeperRead! reads it again.",
  })
  lines_check("read: file_changed is its diff", render.read_lines({
    type = "file_changed", file = { file_path = "/ws/a.py", tokens = 12, diff = "-x\n+y", total_lines = 2 },
  }), { "file_changed: /ws/a.py, 12 tokens", "-x", "+y" })
  lines_check("read: estimate", render.read_lines({
    type = "estimate", file = { file_path = "/ws/big.py", tokens = 9000, num_lines = 2000, partial = false, note = "over the limit" },
  }), { "estimate: /ws/big.py, 9000 tokens", "note: over the limit" })
  lines_check("read: outline", render.read_lines({
    type = "outline", file = {
      file_path = "/ws/big.py", total_lines = 2000, language = "python", shown_symbols = 2, symbols = 40,
      tokens = 300, outline = "class A  1-900\ndef b  901-2000", content = "     1\timport os",
    },
  }), {
    "/ws/big.py: outline of 2000 lines (python), 2 of 40 symbols, 300 tokens",
    "class A  1-900",
    "def b  901-2000",
    "",
    "     1\timport os",
  })
  local payload = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"
  local image = render.read_lines({
    type = "image", file = {
      file_path = "/ws/p.png", format = "PNG", base64 = payload, media_type = "image/png", tokens = 2459,
      dimensions = { original_width = 4000, original_height = 3000, display_width = 1568, display_height = 1176 },
    },
  })
  lines_check("read: an image is its facts, never its base64", image, {
    "/ws/p.png: PNG image, 4000x3000 shown at 1568x1176, 2459 tokens",
  })
  lines_check("read: pdf, where to continue, its note", render.read_lines({
    type = "pdf", file = {
      file_path = "/ws/d.pdf", content = "--- page 1 ---\nhello", page_count = 20, shown_pages = "1-5",
      tokens = 900, partial = true, next_pages = "6-10", note = "page 3 has no text", base64 = payload,
    },
  }), {
    "/ws/d.pdf: PDF, pages 1-5 of 20, 900 tokens; continue with pages='6-10'",
    "--- page 1 ---",
    "hello",
    "note: page 3 has no text",
  })
  lines_check("read: parts lists the PNG files", render.read_lines({
    type = "parts", file = {
      file_path = "/ws/d.pdf", count = 2, output_dir = "/tmp/out", pages = { "/tmp/out/p1.png", "/tmp/out/p2.png" },
      page_numbers = { 1, 2 }, page_count = 20, tokens = 40, partial = true, next_pages = "3-4",
    },
  }), {
    "/ws/d.pdf: pages 1, 2 of 20 rendered to PNG in /tmp/out; continue with pages='3-4', render=true",
    "/tmp/out/p1.png",
    "/tmp/out/p2.png",
  })
  lines_check("read: notebook cells and outputs, no image bytes", render.read_lines({
    type = "notebook", file = {
      file_path = "/ws/n.ipynb", total_cells = 3, partial = true, next_offset = 3, unsaved = true, buffer_version = 2,
      cells = {
        { cell_id = "abc", index = 0, cell_type = "code", source = "print(1)", execution_count = 1, outputs = {
          { output_type = "stream", name = "stdout", text = "1" },
          { output_type = "display_data", images = { { media_type = "image/png", bytes = 10, base64 = payload } } },
        } },
        { cell_id = "def", index = 1, cell_type = "markdown", source = "# T" },
      },
    },
  }), {
    "/ws/n.ipynb: notebook, cells 1-2 of 3; UNSAVED editor buffer (version 2); more: read with offset=3",
    "--- cell abc (code) [1] ---",
    "```", "print(1)", "```",
    ">>> stream:",
    "```", "1", "```",
    ">>> display_data:",
    "--- cell def (markdown) ---",
    "```", "# T", "```",
  })
  local unknown = table.concat(render.read_lines({ type = "hologram", file = { file_path = "/ws/h", base64 = payload } }), "\n")
  check("read: an unknown type shows its facts without base64", unknown:find("hologram", 1, true) and not unknown:find(payload, 1, true), unknown)
end

local function main()
  render_checks()
  local readkeeper = require("readkeeper")
  readkeeper.setup({ session = "nvim-test", debounce_ms = 50, settings = { default_limit = 500 } })
  local v = vim.version()
  check("neovim version", true, string.format("%d.%d.%d", v.major, v.minor, v.patch))
  check("attach path", true, vim.lsp.start and "vim.lsp.start" or "vim.lsp.start_client + buf_attach_client")

  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/app.py"))
  local attached = vim.wait(START_MS, function()
    local client = readkeeper.client()
    return client ~= nil and client.initialized ~= false and (client.server_capabilities or client.resolved_capabilities) ~= nil
  end, 50)
  if not check("attach to the workspace", attached, vim.tbl_map(function(c) return c.name end, all_clients())) then
    return
  end
  local client = readkeeper.client()
  check("root is the workspace", client.config.root_dir == root, client.config.root_dir)
  check("buffer attached", vim.lsp.buf_is_attached(0, client.id))

  -- read, then a stub on re-read
  local err, result = await(function(cb) readkeeper.read("app.py", {}, cb) end)
  check("read returns text", not err and result and result.type == "text", err or result)
  check("read content is cat -n", result and result.file and result.file.content == "     1\tdef restock(sku):\n     2\t    return sku", result)
  err, result = await(function(cb) readkeeper.read("app.py", {}, cb) end)
  check("re-read is a stub", not err and result and result.type == "file_unchanged", err or result)

  -- an external change is caught on edit (lib.py is not open in a buffer)
  local lib = root .. "/lib.py"
  err, result = await(function(cb) readkeeper.read(lib, {}, cb) end)
  check("read lib.py", not err and result and result.type == "text", err or result)
  local f = assert(io.open(lib, "w"))
  f:write("VALUE = 2\n")
  f:close()
  err, result = await(function(cb) readkeeper.edit(lib, "VALUE = 1", "VALUE = 3", {}, cb) end)
  check("external change caught on edit", err and err.data and err.data.kind == "stale", err or result)
  local disk = table.concat(vim.fn.readfile(lib), "\n")
  check("the other writer's change is kept", disk == "VALUE = 2", disk)
  err, result = await(function(cb) readkeeper.read(lib, {}, cb) end)
  err, result = await(function(cb) readkeeper.edit(lib, "VALUE = 2", "VALUE = 3", {}, cb) end)
  check("edit after re-read applies", not err and result and result.replacements == 1, err or result)

  -- a file open in a buffer with no unsaved changes, changed on disk (saved by rename, as
  -- editors and formatters do): the buffer follows it, and the agent's edit applies
  local app = root .. "/app.py"
  local app_buf = vim.fn.bufnr(app)
  local lines = vim.fn.readfile(app)
  table.insert(lines, "TAIL = 0")
  vim.fn.writefile(lines, app .. ".new")
  assert(os.rename(app .. ".new", app))
  local reloaded = vim.wait(ANSWER_MS, function()
    local shown = vim.api.nvim_buf_get_lines(app_buf, 0, -1, false)
    return shown[#shown] == "TAIL = 0"
  end, 20)
  check("an unmodified buffer follows its file changed on disk", reloaded, vim.api.nvim_buf_get_lines(app_buf, 0, -1, false))
  err, result = await(function(cb) readkeeper.read("app.py", {}, cb) end)
  err, result = await(function(cb) readkeeper.edit("app.py", "TAIL = 0", "TAIL = 1", {}, cb) end)
  check("and the edit applies (no dirty_buffer)", not err and result and result.replacements == 1, err or result)

  -- a diagnostic set by any source is forwarded and shows up in attachments
  local ns = vim.api.nvim_create_namespace("readkeeper-test")
  vim.diagnostic.set(ns, 0, {
    { lnum = 1, col = 4, end_lnum = 1, end_col = 10, severity = vim.diagnostic.severity.ERROR, message = "nvim-forwarded: sku is undefined", source = "fake-lint" },
  })
  -- (attachments() sends the pending diagnostics first, without waiting for the debounce)
  err, result = await(function(cb) readkeeper.attachments({ types = { "diagnostics" } }, cb) end)
  local text = ""
  for _, a in ipairs((result and result.attachments) or {}) do
    text = text .. a.content .. "\n"
  end
  check("forwarded diagnostic in attachments", not err and text:find("nvim-forwarded: sku is undefined", 1, true) ~= nil, err or result)

  -- the commands
  vim.cmd("ReadkeeperRead! app.py")
  local shown = vim.wait(ANSWER_MS, function()
    return vim.bo.buftype == "nofile" and vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == "     1\tdef restock(sku):"
  end, 20)
  check(":ReadkeeperRead shows the file", shown, vim.api.nvim_buf_get_lines(0, 0, -1, false))
  vim.cmd("close")
  vim.cmd("ReadkeeperStats")
  shown = vim.wait(ANSWER_MS, function()
    return vim.bo.buftype == "nofile" and table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n"):find("total") ~= nil
  end, 20)
  check(":ReadkeeperStats shows stats", shown, vim.api.nvim_buf_get_lines(0, 0, -1, false))
  local stats_text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  check(
    ":ReadkeeperStats is key: value lines, not a Lua table dump",
    stats_text:find("^total:\n") and stats_text:find("\n  reads: %d") and not stats_text:find("[{}]") and not stats_text:find(" = "),
    stats_text
  )
  vim.cmd("close")
  -- a change made outside to a file this session read shows in :ReadkeeperChanges
  f = assert(io.open(lib, "a"))
  f:write("EXTRA = 1\n")
  f:close()
  local listed = vim.wait(START_MS, function()
    vim.cmd("ReadkeeperChanges")
    local found = vim.wait(ANSWER_MS, function()
      return vim.bo.buftype == "nofile" and vim.api.nvim_buf_get_name(0):find("changes") ~= nil
    end, 20)
    local lines = found and table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n") or ""
    if found then
      vim.cmd("close")
    end
    return lines:find("lib.py: modified", 1, true) ~= nil and lines:find("+EXTRA = 1", 1, true) ~= nil
  end, 200)
  check(":ReadkeeperChanges lists the external change", listed)
  -- The push is its own channel: it may come after `changes` answered, so wait for it.
  local pushed = vim.wait(START_MS, function()
    return #readkeeper.notices > 0
  end, 20)
  check("the change came as a didChangeReadFiles notice too", pushed, readkeeper.notices)

  -- :ReadkeeperRead resolves a relative path against the current directory, as its
  -- completion offers it (pkg/mod.py, not the root's mod.py)
  vim.cmd("cd " .. vim.fn.fnameescape(root .. "/pkg"))
  local offered = vim.fn.getcompletion("ReadkeeperRead mo", "cmdline")
  check("completion offers paths relative to the current directory", vim.tbl_contains(offered, "mod.py"), offered)
  vim.cmd("ReadkeeperRead mod.py")
  shown = vim.wait(ANSWER_MS, function()
    return vim.bo.buftype == "nofile" and vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == "     1\tIN_PKG = True"
  end, 20)
  check(":ReadkeeperRead reads what completion offered", shown, vim.api.nvim_buf_get_lines(0, 0, -1, false))
  check("the relative path was resolved to pkg/mod.py", readkeeper.resolve_path("mod.py") == root .. "/pkg/mod.py", readkeeper.resolve_path("mod.py"))

  -- commands where there is no file: a clear message, never a Lua error
  local function no_file_commands(where, expected)
    local mark = #notified
    local ok_cmd, problem = pcall(vim.cmd, "ReadkeeperRead")
    check(":ReadkeeperRead in " .. where .. " raises no error", ok_cmd, problem)
    local msg = notified_since(mark, "not a file")
    check(":ReadkeeperRead in " .. where .. " says what to do", msg and msg:find(expected, 1, true) and msg:find(":ReadkeeperRead src/app.py", 1, true), notified)
    for _, command in ipairs({ "ReadkeeperStats", "ReadkeeperChanges" }) do
      local before = vim.api.nvim_get_current_win()
      ok_cmd, problem = pcall(vim.cmd, command)
      local answered = ok_cmd and vim.wait(ANSWER_MS, function()
        return vim.api.nvim_get_current_win() ~= before and vim.api.nvim_buf_get_name(0):find("^readkeeper://") ~= nil
      end, 20)
      check(":" .. command .. " in " .. where .. " shows the workspace's answer", answered, problem or notified)
      if answered then
        vim.cmd("close")
      end
    end
  end
  -- the result window :ReadkeeperRead just opened
  no_file_commands("a result window", "a readkeeper result")
  vim.cmd("close")
  vim.cmd("enew")
  no_file_commands("an unnamed buffer", "an unnamed buffer")
  -- The job is let start (its output seen) and stopped before its buffer is wiped: a pty
  -- closed while its child is still being set up can send SIGHUP to Neovim itself.
  vim.cmd("terminal echo ready; exec cat")
  local job = vim.b.terminal_job_id
  vim.wait(ANSWER_MS, function()
    return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n"):find("ready", 1, true) ~= nil
  end, 20)
  no_file_commands("a terminal", "a terminal")
  vim.fn.jobstop(job)
  vim.fn.jobwait({ job }, ANSWER_MS)
  vim.cmd("bwipeout!")
  local help_ok = pcall(vim.cmd, "help lua")
  if check("help opens", help_ok and vim.bo.buftype == "help") then
    no_file_commands("help", "a help page")
    vim.cmd("close")
  end
  vim.cmd("cd " .. vim.fn.fnameescape(root))

  -- no root marker: the file's own folder is the workspace
  vim.cmd("edit " .. vim.fn.fnameescape(loose .. "/note.txt"))
  local loose_client = nil
  vim.wait(START_MS, function()
    for _, c in ipairs(all_clients()) do
      if c.name == "readkeeper" and c.config.root_dir == loose and vim.lsp.buf_is_attached(0, c.id) then
        loose_client = c
      end
    end
    return loose_client ~= nil
  end, 50)
  check("a file outside any project gets a server rooted at its folder", loose_client ~= nil, vim.tbl_map(function(c) return c.config.root_dir end, all_clients()))

  -- never "/" or the home folder
  local function refused(path, expected)
    local mark = #notified
    local count = #all_clients()
    vim.cmd("edit " .. vim.fn.fnameescape(path))
    local msg = vim.wait(ANSWER_MS, function()
      return notified_since(mark, "not started for") ~= nil
    end, 20) and notified_since(mark, "not started for")
    check(path .. ": no server, with a message", msg and msg:find(expected, 1, true) and msg:find("root_markers", 1, true), notified)
    local attached = false
    for _, c in ipairs(all_clients()) do
      attached = attached or vim.lsp.buf_is_attached(0, c.id)
    end
    check(path .. ": nothing attached, nothing started", not attached and #all_clients() == count, vim.tbl_map(function(c) return c.config.root_dir end, all_clients()))
  end
  refused(home .. "/todo.txt", "your home folder")
  -- a buffer for a new file directly in "/" (never written)
  refused("/readkeeper-plugin-test-never-written.txt", "its folder is /")
  -- a root marker in the home folder (a dotfiles repository) is not a project
  check("a marker in the home folder is not a root", readkeeper.root_for(home .. "/notes/idea.txt") == home .. "/notes", readkeeper.root_for(home .. "/notes/idea.txt"))

  -- root_markers replaces the default list (not merged into it by index): with only
  -- ".hg", which nothing here has, pkg/mod.py's root is its own folder
  readkeeper.setup({ session = "nvim-test", root_markers = { ".hg" } })
  check("root_markers replaces the default", vim.deep_equal(readkeeper.config.root_markers, { ".hg" }) and readkeeper.root_for(root .. "/pkg/mod.py") == root .. "/pkg", readkeeper.config.root_markers)

  -- the server's program is looked up in PATH's absolute entries only: with an empty
  -- entry (a trailing ':'), a `python3` planted in the folder Neovim runs in is never it
  do
    local util = require("readkeeper.util")
    local saved_path, saved_cwd = vim.env.PATH, vim.fn.getcwd()
    vim.fn.writefile({ "#!/bin/sh", "echo planted" }, broken .. "/python3")
    vim.fn.setfperm(broken .. "/python3", "rwxr-xr-x")
    vim.fn.writefile({ "#!/bin/sh" }, broken .. "/only-here")
    vim.fn.setfperm(broken .. "/only-here", "rwxr-xr-x")
    vim.env.PATH = ":.:" .. saved_path
    vim.cmd("cd " .. vim.fn.fnameescape(broken))
    local found, only = util.on_path("python3"), util.on_path("only-here")
    vim.cmd("cd " .. vim.fn.fnameescape(saved_cwd))
    vim.env.PATH = saved_path
    vim.fn.delete(broken .. "/python3")
    vim.fn.delete(broken .. "/only-here")
    check("an empty or relative PATH entry is not searched", only == nil and (found == nil or (found:sub(1, 1) == "/" and found ~= broken .. "/python3")), { found = found, only = only })
  end

  -- a server that cannot start: its stderr reason and the fix reach the user
  local mark = #notified
  readkeeper.setup({ session = "nvim-test", cmd = { python, "-I", "-S", "-m", "readkeeper", "serve" } })
  vim.cmd("edit " .. vim.fn.fnameescape(broken .. "/main.py"))
  local failure = vim.wait(START_MS, function()
    return notified_since(mark, "did not start") ~= nil
  end, 50) and notified_since(mark, "did not start")
  check("a failed start says why, from the server's stderr", failure and failure:find("No module named readkeeper", 1, true), notified)
  check("a failed start says how to fix it", failure and failure:find("pipx install", 1, true) and failure:find("python = ", 1, true), failure)
  local messages = vim.fn.execute("messages")
  check("the reason is in :messages", messages:find("No module named readkeeper", 1, true) ~= nil, messages)
  -- a command that is not there (yet) is named before anything starts
  mark = #notified
  local launcher = broken .. "/bin/readkeeper-serve"
  readkeeper.setup({ session = "nvim-test", cmd = { launcher } })
  vim.cmd("edit " .. vim.fn.fnameescape(broken .. "/other.py"))
  local missing = notified_since(mark, "did not start")
  check("a missing command is named", missing and missing:find(launcher, 1, true), notified)
  check("a missing path is said not to exist (not: not on PATH)", missing and missing:find("does not exist", 1, true) and not missing:find("not an executable on PATH", 1, true), missing)
  -- installed now: :ReadkeeperRestart starts it for the workspace that failed
  vim.fn.mkdir(broken .. "/bin", "p")
  vim.fn.writefile({ "#!/bin/sh", "exec '" .. python .. "' -P -m readkeeper serve" }, launcher)
  vim.fn.setfperm(launcher, "rwxr-xr-x")
  mark = #notified
  vim.cmd("ReadkeeperRestart")
  check(":ReadkeeperRestart says it restarts", notified_since(mark, "restarting") or notified_since(mark, "starting the servers"), notified)
  -- every workspace's server restarts at once: generous on a loaded machine
  local restarted = vim.wait(START_MS, function()
    local c = readkeeper.client()
    return c ~= nil and c.config.root_dir == broken and vim.lsp.buf_is_attached(0, c.id)
  end, 50)
  check(":ReadkeeperRestart starts the fixed server", restarted, { roots = vim.tbl_map(function(c) return c.config.root_dir end, all_clients()), notified = notified })
  check(":ReadkeeperRestart says when it has started again", notified_since(mark, "starting again") ~= nil, notified)

  -- autostart = false: a restart attaches again the buffers that were attached, and no
  -- other (root/mod.py is loaded, never attached)
  readkeeper.setup({ session = "nvim-test", autostart = false })
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/app.py"))
  local app_buf = vim.api.nvim_get_current_buf()
  readkeeper.attach(app_buf)
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/mod.py"))
  local mod_buf = vim.api.nvim_get_current_buf()
  -- buffer -> true for the buffers attached to a client not in `old` (client ids)
  local function attached_bufs(old)
    local set = {}
    for _, c in ipairs(all_clients()) do
      if not old[c.id] then
        for _, b in ipairs(vim.lsp.get_buffers_by_client_id(c.id)) do
          set[b] = true
        end
      end
    end
    return set
  end
  local before, old_ids = {}, {}
  vim.wait(START_MS, function()
    before = attached_bufs({})
    return before[app_buf] == true
  end, 50)
  check("autostart = false: only attach() attaches", before[app_buf] and not before[mod_buf], { before = before, app = app_buf, mod = mod_buf })
  for _, c in ipairs(all_clients()) do
    old_ids[c.id] = true
  end
  vim.cmd("ReadkeeperRestart")
  -- attached again: to new clients (the old ones are gone)
  local after = {}
  local back = vim.wait(START_MS, function()
    after = attached_bufs(old_ids)
    for b in pairs(before) do
      if not after[b] then
        return false
      end
    end
    return true
  end, 50)
  vim.wait(500) -- what else the restart attached has been attached by now
  after = attached_bufs(old_ids)
  check("autostart = false: a restart attaches the attached buffers again", back, { before = before, after = after })
  -- (Only mod.py is sure never to have been attached: buffers of the workspaces started
  -- and restarted above may still be attaching, from those steps, while this one runs.)
  check("autostart = false: a restart does not attach a buffer never attached", not after[mod_buf], { before = before, after = after, mod = mod_buf })
end

local ok, problem = xpcall(main, debug.traceback)
check("script ran to the end", ok, problem)
local file = assert(io.open(out, "w"))
file:write(vim.fn.json_encode(results))
file:close()
for _, client in ipairs(all_clients()) do
  vim.lsp.stop_client(client.id)
end
vim.wait(3000, function() return #all_clients() == 0 end, 50)
vim.cmd("qa!")
