-- What every module of the plugin shares: messages, and the differences between Neovim
-- versions (0.7 through current) in one place.

local M = {}

M.uv = vim.uv or vim.loop

function M.has(version)
  return vim.fn.has("nvim-" .. version) == 1
end

function M.notify(msg, level)
  vim.notify("readkeeper: " .. msg, level or vim.log.levels.INFO)
end

--- A method of an LSP client: Neovim 0.11 made them take self (client:request); older
--- ones do not.
function M.call(client, method, ...)
  if M.has("0.11") then
    return client[method](client, ...)
  end
  return client[method](...)
end

--- vim.lsp.get_clients (0.10+), or get_active_clients filtered by name.
function M.get_clients(filter)
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

--- The absolute path of the program `name` on PATH, or nil. Only absolute PATH entries
--- count: an empty or relative one names the folder the server runs in (the workspace),
--- where a repository could put its own `python3` (SECURITY.md). A name with a slash is
--- a path already, returned as it is when executable.
function M.on_path(name)
  if name:find("/", 1, true) then
    return vim.fn.executable(name) == 1 and name or nil
  end
  for _, dir in ipairs(vim.split(vim.env.PATH or "", ":", { plain = true })) do
    if dir:sub(1, 1) == "/" then
      local candidate = dir:gsub("/+$", "") .. "/" .. name
      local stat = M.uv.fs_stat(candidate)
      if stat and stat.type ~= "directory" and vim.fn.executable(candidate) == 1 then
        return candidate
      end
    end
  end
  return nil
end

--- Why `name` cannot be run, for a message: a path that does not exist or is not
--- executable is said as such; a bare name is missing from PATH.
function M.why_not_runnable(name)
  if not name:find("/", 1, true) then
    return string.format("`%s` is not an executable on PATH", name)
  end
  local stat = M.uv.fs_stat(name)
  if not stat then
    return string.format("`%s` does not exist", name)
  end
  if stat.type == "directory" then
    return string.format("`%s` is a folder, not a program", name)
  end
  return string.format("`%s` is not executable (chmod +x it)", name)
end

return M
