-- Workspace roots, and what a buffer holds. readkeeper never takes "/" or the home
-- folder as a workspace: the server would watch and read the whole disk or home (every
-- dotfile and key) without a prompt.

local config = require("readkeeper.config")
local util = require("readkeeper.util")

local M = {}

local function realpath(path)
  return util.uv.fs_realpath(path) or path
end

-- "/" or the home folder (said as such), or nil.
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
  if config.current.root_dir then
    local root = config.current.root_dir(path)
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
    for _, marker in ipairs(config.current.root_markers) do
      if util.uv.fs_stat(d .. "/" .. marker) then
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
        table.concat(config.current.root_markers, ", "),
        wide
      )
  end
  return dir, nil
end

--- The file a buffer holds, or nil and what the buffer is instead (for messages).
function M.buffer_file(bufnr)
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

return M
