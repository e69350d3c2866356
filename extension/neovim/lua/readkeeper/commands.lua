-- :ReadkeeperRead, :ReadkeeperChanges, :ReadkeeperStats and :ReadkeeperRestart. Each
-- runs guarded (a fault in the plugin is one message naming the command, never a Lua
-- traceback) and shows its answer in a scratch window, worded by render.lua.

local render = require("readkeeper.render")
local roots = require("readkeeper.roots")
local server = require("readkeeper.server")
local util = require("readkeeper.util")

local notify = util.notify

local M = {}

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
        return notify(render.error_text(err), vim.log.levels.ERROR)
      end
      show_result(result)
    end))
  end
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

--- Create the commands; `api` is require("readkeeper"), whose requests they make.
function M.register(api)
  local function read(opts)
    local path
    if opts.args ~= "" then
      path = M.resolve_path(opts.args)
    else
      local what
      path, what = roots.buffer_file(vim.api.nvim_get_current_buf())
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
    local client = server.client_for_path(path) or server.client()
    if not client then
      return notify(server.NOT_RUNNING, vim.log.levels.WARN)
    end
    local params = { file_path = path, force = opts.bang or nil }
    api.request("readkeeper/read", params, on_answer(":ReadkeeperRead", function(result)
      show("read", render.read_lines(result))
    end), nil, client)
  end

  local function changes()
    api.changes({}, on_answer(":ReadkeeperChanges", function(result)
      show("changes", render.changes_lines(result))
    end))
  end

  local function stats()
    api.stats({}, on_answer(":ReadkeeperStats", function(result)
      show("stats", render.stats_lines(result))
    end))
  end

  -- Completion offers paths relative to the current directory, and M.resolve_path
  -- reads them the same way.
  vim.api.nvim_create_user_command("ReadkeeperRead", guarded(":ReadkeeperRead", read), {
    nargs = "?",
    bang = true,
    complete = "file",
    desc = "readkeeper: read a file as the agent would (! forces past the stub)",
  })
  vim.api.nvim_create_user_command(
    "ReadkeeperChanges",
    guarded(":ReadkeeperChanges", changes),
    { desc = "readkeeper: files read that changed since" }
  )
  vim.api.nvim_create_user_command("ReadkeeperStats", guarded(":ReadkeeperStats", stats), { desc = "readkeeper: stats" })
  vim.api.nvim_create_user_command(
    "ReadkeeperRestart",
    guarded(":ReadkeeperRestart", server.restart),
    { desc = "readkeeper: restart the servers (after installing readkeeper or a failed start)" }
  )
end

return M
