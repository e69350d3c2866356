-- Run by tests/test_neovim.py in real headless Neovim:
--   nvim --headless -u NONE -i NONE -n --cmd "set rtp^=extension/neovim" -c "luafile THIS"
-- Environment: READKEEPER_TEST_ROOT (a workspace with app.py and lib.py),
-- READKEEPER_TEST_OUT (where the results go, as JSON), READKEEPER_PYTHON.
-- Each check is recorded as {name, ok, detail}; the script always quits.

local root = assert(os.getenv("READKEEPER_TEST_ROOT"))
local out = assert(os.getenv("READKEEPER_TEST_OUT"))
local results = {}

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
  vim.wait(timeout or 10000, function()
    return done
  end, 20)
  if not done then
    return { message = "timed out" }, nil
  end
  return err, result
end

local function main()
  local readkeeper = require("readkeeper")
  readkeeper.setup({ session = "nvim-test", debounce_ms = 50, settings = { default_limit = 500 } })
  local v = vim.version()
  check("neovim version", true, string.format("%d.%d.%d", v.major, v.minor, v.patch))
  check("attach path", true, vim.lsp.start and "vim.lsp.start" or "vim.lsp.start_client + buf_attach_client")

  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/app.py"))
  local attached = vim.wait(15000, function()
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

  -- a diagnostic set by any source is forwarded and shows up in attachments
  local ns = vim.api.nvim_create_namespace("readkeeper-test")
  vim.diagnostic.set(ns, 0, {
    { lnum = 1, col = 4, end_lnum = 1, end_col = 10, severity = vim.diagnostic.severity.ERROR, message = "nvim-forwarded: sku is undefined", source = "fake-lint" },
  })
  vim.wait(500, function() return false end, 20) -- past the debounce
  err, result = await(function(cb) readkeeper.attachments({ types = { "diagnostics" } }, cb) end)
  local text = ""
  for _, a in ipairs((result and result.attachments) or {}) do
    text = text .. a.content .. "\n"
  end
  check("forwarded diagnostic in attachments", not err and text:find("nvim-forwarded: sku is undefined", 1, true) ~= nil, err or result)

  -- the commands
  vim.cmd("ReadkeeperRead! app.py")
  local shown = vim.wait(5000, function()
    return vim.bo.buftype == "nofile" and vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == "     1\tdef restock(sku):"
  end, 20)
  check(":ReadkeeperRead shows the file", shown, vim.api.nvim_buf_get_lines(0, 0, -1, false))
  vim.cmd("close")
  vim.cmd("ReadkeeperStats")
  shown = vim.wait(5000, function()
    return vim.bo.buftype == "nofile" and table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n"):find("total") ~= nil
  end, 20)
  check(":ReadkeeperStats shows stats", shown, vim.api.nvim_buf_get_lines(0, 0, -1, false))
  vim.cmd("close")
  -- a change made outside to a file this session read shows in :ReadkeeperChanges
  f = assert(io.open(lib, "a"))
  f:write("EXTRA = 1\n")
  f:close()
  local listed = vim.wait(8000, function()
    vim.cmd("ReadkeeperChanges")
    local found = vim.wait(1000, function()
      return vim.bo.buftype == "nofile" and vim.api.nvim_buf_get_name(0):find("changes") ~= nil
    end, 20)
    local lines = found and table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n") or ""
    if found then
      vim.cmd("close")
    end
    return lines:find("lib.py: modified", 1, true) ~= nil and lines:find("+EXTRA = 1", 1, true) ~= nil
  end, 200)
  check(":ReadkeeperChanges lists the external change", listed)
  check("the change came as a didChangeReadFiles notice too", #readkeeper.notices > 0, readkeeper.notices)
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
