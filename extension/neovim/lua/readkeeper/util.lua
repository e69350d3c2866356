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

return M
