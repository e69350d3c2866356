-- readkeeper for Neovim: starts `python -m readkeeper serve` with vim.lsp for every file
-- buffer in a workspace, forwards vim.diagnostic changes to it, and offers commands and
-- a Lua API (read, edit, write, attachments, changes, stats, forget) for chat plugins.
--
-- Works on Neovim 0.7 through current. What a user sees when something is wrong is a
-- vim.notify message that says what happened and what to do, never a raw Lua error: a
-- server that does not start (the reason from its stderr, and the fix), a file with no
-- workspace (readkeeper never takes "/" or the home folder as one), a command run where
-- there is no file.
--
-- This module is the public API; the work is done in:
--   config.lua       the options and their defaults
--   roots.lua        workspace roots, and what a buffer holds
--   server.lua       starting, finding and restarting the servers; change notices
--   diagnostics.lua  forwarding vim.diagnostic changes
--   commands.lua     the :Readkeeper* commands
--   render.lua       results as text (the one place that words them)
--   util.lua         messages, and the differences between Neovim versions

local commands = require("readkeeper.commands")
local config = require("readkeeper.config")
local diagnostics = require("readkeeper.diagnostics")
local render = require("readkeeper.render")
local roots = require("readkeeper.roots")
local server = require("readkeeper.server")
local util = require("readkeeper.util")

local M = {}

--- The options in force (see config.lua; setup() replaces them).
M.config = config.current
--- Every didChangeReadFiles notice received, newest last.
M.notices = server.notices

M.root_for = roots.root_for
M.attach = server.attach
M.client = server.client
M.restart = server.restart
M.diagnostics_item = diagnostics.item
--- Send pending diagnostics now (tests; before asking for attachments).
M.flush_diagnostics = diagnostics.flush
M.result_lines = render.read_lines
M.resolve_path = commands.resolve_path

-- --- the Lua API -------------------------------------------------------------------------

--- Send a readkeeper/* request; callback(err, result). err is the JSON-RPC error
--- ({code, message, data = {kind, ...}}) or nil. The server is the one of `bufnr`'s
--- workspace (see M.client), or `client` when given.
function M.request(method, params, callback, bufnr, client)
  client = client or M.client(bufnr)
  callback = callback or function() end
  if not client then
    callback({ code = -32803, message = server.NOT_RUNNING, data = { kind = "not_running" } }, nil)
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
  return util.call(client, "request", method, params, function(err, result)
    callback(err, result)
  end, bufnr)
end

local function merge(base, opts)
  return vim.tbl_extend("force", base, opts or {})
end

--- read(path, {offset, limit, pages, symbol, render, include_images, estimate, force, session},
---   callback(err, result)): every field of readkeeper/read goes through as given
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
  diagnostics.flush()
  return M.request("readkeeper/attachments", opts, callback)
end

--- changes({session}, callback): files this session read that changed since.
function M.changes(opts, callback)
  return M.request("readkeeper/changes", opts or {}, callback)
end

--- stats({session}, callback): the session's counters.
function M.stats(opts, callback)
  return M.request("readkeeper/stats", opts or {}, callback)
end

--- forget({session, paths}, callback): clear what the session has read.
function M.forget(opts, callback)
  return M.request("readkeeper/forget", opts or {}, callback)
end

-- --- setup -------------------------------------------------------------------------------

--- setup({...}) (README "Options"): start readkeeper for file buffers, forward
--- diagnostics, create the commands. Calling it again applies new options and retries
--- what failed to start.
function M.setup(opts)
  M.config = config.set(opts)
  server.forget_failures()
  local group = vim.api.nvim_create_augroup("readkeeper", { clear = true })
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(args)
      server.entered(args.buf)
    end,
  })
  if M.config.autostart then
    vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
      group = group,
      callback = function(args)
        M.attach(args.buf)
      end,
    })
    server.attach_loaded()
  end
  if M.config.forward_diagnostics then
    vim.api.nvim_create_autocmd("DiagnosticChanged", { group = group, callback = diagnostics.changed })
  end
  commands.register(M)
  return M
end

return M
