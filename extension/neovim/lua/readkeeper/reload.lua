-- An attached buffer with no unsaved changes follows its file on disk. Neovim reloads a
-- changed file only when something runs :checktime (focus, a shell command, entering the
-- buffer), so until then the server sees an editor copy that disagrees with the disk
-- and refuses every edit of the file (`dirty_buffer`: it never writes underneath an open
-- document). A watch per buffer runs :checktime for it when its file changes; Neovim
-- then reloads it ('autoread', on by default) or asks the user, as for any change.

local util = require("readkeeper.util")

local M = {}

local watches = {} -- bufnr -> uv fs_event handle

local function stop(bufnr)
  local handle = watches[bufnr]
  watches[bufnr] = nil
  if handle and not handle:is_closing() then
    handle:stop()
    handle:close()
  end
end

local function follow(bufnr, path)
  local handle = util.uv.new_fs_event()
  if not handle then
    return
  end
  watches[bufnr] = handle
  handle:start(path, {}, vim.schedule_wrap(function()
    -- A save by rename leaves the watch on the old file: watch the path afresh.
    stop(bufnr)
    if not vim.api.nvim_buf_is_loaded(bufnr) then
      return
    end
    if not vim.bo[bufnr].modified then
      vim.cmd("checktime " .. bufnr)
    end
    if util.uv.fs_stat(path) then
      follow(bufnr, path)
    end
  end))
end

--- Follow `path`, the file of `bufnr`, until the buffer is unloaded (once per buffer).
function M.watch(bufnr, path)
  if watches[bufnr] then
    return
  end
  follow(bufnr, path)
  vim.api.nvim_create_autocmd({ "BufUnload", "BufDelete" }, {
    buffer = bufnr,
    once = true,
    callback = function()
      stop(bufnr)
    end,
  })
end

return M
