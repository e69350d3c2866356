-- readkeeper's results as text for the user: the lines of a result window, the one-line
-- notice that files the agent read changed, and a JSON-RPC error as a message. The
-- plugin's one place that turns a result into words.

local M = {}

local function split(text)
  return vim.split(text or "", "\n", { plain = true })
end

--- The lines a read result shows (text, stub, or a summary of other kinds).
function M.read_lines(result)
  local file = result.file or {}
  if result.type == "text" then
    local lines = split(file.content)
    if file.partial and file.next_offset then
      table.insert(lines, string.format("[partial: continue with offset %d]", file.next_offset))
    end
    return lines
  elseif result.type == "file_unchanged" then
    return { "[file unchanged since this session read it: " .. (file.file_path or "?") .. "]" }
  elseif result.type == "pdf" then
    return split(file.content)
  end
  return split(vim.inspect(result))
end

--- The lines of a readkeeper/changes result: each file and its diff, indented.
function M.changes_lines(result)
  local lines = {}
  for _, change in ipairs(result.changes or {}) do
    table.insert(lines, string.format("%s: %s", change.file_path, change.kind))
    for _, line in ipairs(split(change.diff)) do
      table.insert(lines, "  " .. line)
    end
  end
  if #lines == 0 then
    lines = { "No file read in this session has changed since." }
  end
  return lines
end

--- The lines of a readkeeper/stats result.
function M.stats_lines(result)
  return split(vim.inspect(result))
end

--- One line for a readkeeper/didChangeReadFiles notice, or nil when it names no file.
function M.notice_line(params)
  local files = {}
  for _, change in ipairs((params and params.changes) or {}) do
    table.insert(files, vim.fn.fnamemodify(change.file_path or "?", ":~:.") .. " (" .. (change.kind or "changed") .. ")")
  end
  if #files == 0 then
    return nil
  end
  return "readkeeper: changed since the agent read it: " .. table.concat(files, ", ")
end

--- A failed request as a message: the error's kind, then the server's message.
function M.error_text(err)
  if type(err) ~= "table" then
    return tostring(err)
  end
  local kind = err.data and err.data.kind and (err.data.kind .. ": ") or ""
  return kind .. (err.message or vim.inspect(err))
end

return M
