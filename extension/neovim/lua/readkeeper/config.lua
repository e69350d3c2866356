-- The plugin's options (README "Options"), their defaults, and the options in force.

local M = {}

M.defaults = {
  -- Command that starts the server. Default: { python, "-P", "-m", "readkeeper", "serve" }
  -- when `python` or $READKEEPER_PYTHON is set, else { "readkeeper", "serve" } when
  -- `readkeeper` is on PATH (pipx / uv tool install), else python3 -P -m readkeeper serve.
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
  -- through workspace/configuration (section "readkeeper"). `allowed_paths`, `watcher`
  -- and `token_encoding`, like `cmd` and `python`, are yours only: never set them from
  -- a project's .nvim.lua/.exrc (README "Settings only you may set").
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

--- The options in force (require("readkeeper").config is this table).
M.current = vim.deepcopy(M.defaults)

--- The defaults with `opts` over them; becomes the options in force.
function M.set(opts)
  opts = opts or {}
  local config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- Lists replace the default, not merge into it by index.
  config.root_markers = opts.root_markers or config.root_markers
  M.current = config
  return config
end

return M
