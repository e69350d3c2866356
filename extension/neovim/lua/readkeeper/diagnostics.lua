-- Forwards vim.diagnostic changes (every source) to readkeeper/didChangeDiagnostics,
-- debounced, each buffer with its document version.
--
-- The server decides what the agent sees (attachments/diagnostics.py sorts what arrives
-- and cuts it to a token budget). What stays here is the bound on what crosses the wire:
-- at most `max_diagnostics_per_file` per buffer, the most severe first so that the cut
-- never drops an error for a warning, in the server's order (severity, line, column).
-- The VS Code extension applies the same bound in src/agent/diagnostics.ts.

local config = require("readkeeper.config")
local util = require("readkeeper.util")

local M = {}

local timer = nil
local pending = {} -- bufnr -> true

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

local function before(a, b)
  if a.severity ~= b.severity then
    return a.severity < b.severity
  end
  if a.lnum ~= b.lnum then
    return a.lnum < b.lnum
  end
  return (a.col or 0) < (b.col or 0)
end

--- The didChangeDiagnostics item of a buffer: every source's diagnostics, the most
--- severe first, at most `max_diagnostics_per_file`.
function M.item(bufnr)
  local diagnostics = vim.diagnostic.get(bufnr)
  table.sort(diagnostics, before)
  local items = {}
  for i, d in ipairs(diagnostics) do
    if i > config.current.max_diagnostics_per_file then
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

--- Send the pending changes now (the debounce timer calls this; so do attachments).
function M.flush()
  local items = {}
  for bufnr in pairs(pending) do
    if vim.api.nvim_buf_is_valid(bufnr) and vim.api.nvim_buf_get_name(bufnr) ~= "" then
      table.insert(items, M.item(bufnr))
    end
  end
  pending = {}
  if #items == 0 then
    return
  end
  for _, client in ipairs(util.get_clients({ name = config.current.name })) do
    util.call(client, "notify", "readkeeper/didChangeDiagnostics", { items = items })
  end
end

--- The DiagnosticChanged autocommand: note the buffer, send once the burst settles.
function M.changed(args)
  local bufnr = args and args.buf or vim.api.nvim_get_current_buf()
  pending[bufnr] = true
  if not timer then
    timer = util.uv.new_timer()
  end
  timer:stop()
  timer:start(config.current.debounce_ms, 0, vim.schedule_wrap(M.flush))
end

return M
