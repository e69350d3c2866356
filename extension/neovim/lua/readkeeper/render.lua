-- readkeeper's results as text for the user: the lines of a result window, the one-line
-- notice that files the agent read changed, and a JSON-RPC error as a message. The
-- plugin's one place that turns a result into words.

local M = {}

local function split(text)
  return vim.split(text or "", "\n", { plain = true })
end

-- A JSON null arrives as nil or vim.NIL, depending on the Neovim version.
local function given(value)
  return value ~= nil and value ~= vim.NIL
end

local function str(value)
  return given(value) and tostring(value) or "?"
end

local function append(lines, text)
  for _, line in ipairs(split(text)) do
    table.insert(lines, line)
  end
  return lines
end

local function with_note(lines, file)
  if given(file.note) and file.note ~= "" then
    table.insert(lines, "note: " .. file.note)
  end
  return lines
end

-- `value` without its base64 payloads (the facts, for a result type this plugin does not
-- know yet).
local function without_payloads(value)
  if type(value) ~= "table" then
    return value
  end
  local copy = {}
  for k, v in pairs(value) do
    if k ~= "base64" then
      copy[k] = without_payloads(v)
    end
  end
  return copy
end

local UNSAVED = "UNSAVED editor buffer (version %s)"

-- One function per result type, worded as server/render.py's read() words it (the
-- reference every front end follows); text keeps its numbered lines first.
local read = {}

function read.text(file)
  local lines = split(file.content)
  if file.unsaved then
    table.insert(lines, "[" .. string.format(UNSAVED, str(file.buffer_version)) .. ", not the file on disk]")
  end
  if file.partial and given(file.next_offset) then
    local start = given(file.start_line) and file.start_line or 1
    local count = given(file.num_lines) and file.num_lines or 0
    table.insert(lines, string.format(
      "[lines %s-%s of %s; more: read with offset=%s]",
      str(start), str(start + count - 1), str(file.total_lines), str(file.next_offset)
    ))
  end
  return with_note(lines, file)
end

-- What a stub stands for, from its fields: the lines (as numbered now), how the session
-- got them (a read, or its own write or edit, and when), and what changed around them.
-- The server's note, shown after it, says the same in the agent's words.
local HOW = {
  read = "from your read",
  outline = "from your outline read",
  symbol = "from your symbol read",
  write = "exactly as your write left them",
  edit = "as your edit left them",
}

local function held(file)
  local what = "what you got"
  if given(file.start_line) and given(file.num_lines) then
    what = string.format("lines %s-%s", file.start_line, file.start_line + file.num_lines - 1)
    if given(file.total_lines) then
      what = what .. " of " .. file.total_lines
    end
  end
  if given(file.symbol) then
    what = file.symbol .. " (" .. what .. ")"
  end
  local how = HOW[file.obtained_by] or HOW.read
  if given(file.obtained_at) then
    how = how .. " at " .. file.obtained_at
  end
  local line = string.format("file_unchanged: %s, %s, %s", str(file.file_path), what, how)
  if given(file.previous_start_line) and given(file.num_lines) then
    local first = file.previous_start_line
    line = line .. string.format(" (were lines %s-%s)", first, first + file.num_lines - 1)
  end
  if given(file.changed_outside) then
    local where = file.changed_outside == "outside" and "elsewhere" or (file.changed_outside .. " them")
    line = line .. "; the file changed " .. where
  end
  return line .. "; :ReadkeeperRead! reads it again."
end

function read.file_unchanged(file)
  return with_note({ held(file) }, file)
end

function read.file_changed(file)
  local lines = { string.format("file_changed: %s, %s tokens", str(file.file_path), str(file.tokens)) }
  return with_note(append(lines, file.diff), file)
end

function read.estimate(file)
  return with_note({ string.format("estimate: %s, %s tokens", str(file.file_path), str(file.tokens)) }, file)
end

function read.outline(file)
  local lines = {
    string.format(
      "%s: outline of %s lines (%s), %s of %s symbols, %s tokens",
      str(file.file_path), str(file.total_lines), str(file.language),
      str(file.shown_symbols), str(file.symbols), str(file.tokens)
    ),
  }
  append(lines, file.outline)
  table.insert(lines, "")
  return with_note(append(lines, file.content), file)
end

function read.image(file)
  local dims = given(file.dimensions) and file.dimensions or {}
  return with_note({
    string.format(
      "%s: %s image, %sx%s shown at %sx%s, %s tokens",
      str(file.file_path), given(file.format) and file.format or "image",
      str(dims.original_width), str(dims.original_height),
      str(dims.display_width), str(dims.display_height), str(file.tokens)
    ),
  }, file)
end

function read.pdf(file)
  local head = string.format(
    "%s: PDF, pages %s of %s, %s tokens",
    str(file.file_path), str(file.shown_pages), str(file.page_count), str(file.tokens)
  )
  if file.partial and given(file.next_pages) then
    head = head .. "; continue with pages='" .. file.next_pages .. "'"
  end
  return with_note(append({ head }, file.content), file)
end

function read.parts(file)
  local numbers = vim.tbl_map(tostring, given(file.page_numbers) and file.page_numbers or {})
  local head = string.format(
    "%s: pages %s of %s rendered to PNG in %s",
    str(file.file_path), table.concat(numbers, ", "), str(file.page_count), str(file.output_dir)
  )
  if file.partial and given(file.next_pages) then
    head = head .. "; continue with pages='" .. file.next_pages .. "', render=true"
  end
  local lines = { head }
  for _, page in ipairs(given(file.pages) and file.pages or {}) do
    table.insert(lines, page)
  end
  return with_note(lines, file)
end

function read.notebook(file)
  local head = string.format("%s: notebook, %s cells", str(file.file_path), str(file.total_cells))
  if file.unsaved then
    head = head .. "; " .. string.format(UNSAVED, str(file.buffer_version))
  end
  if file.partial and given(file.next_offset) then
    head = head .. "; more: read with offset=" .. str(file.next_offset)
  end
  local lines = { head }
  for _, cell in ipairs(given(file.cells) and file.cells or {}) do
    local count = given(cell.execution_count) and (" [" .. tostring(cell.execution_count) .. "]") or ""
    table.insert(lines, string.format("--- cell %s (%s)%s ---", str(cell.cell_id), str(cell.cell_type), count))
    append(lines, cell.source)
    for _, output in ipairs(given(cell.outputs) and cell.outputs or {}) do
      local body = ""
      for _, field in ipairs({ "text", "traceback", "evalue" }) do
        if given(output[field]) and output[field] ~= "" then
          body = output[field]
          break
        end
      end
      -- (its images go unshown: their bytes are not text)
      local text = (">>> " .. str(output.output_type) .. ": " .. body):gsub("%s+$", "")
      append(lines, text)
    end
  end
  return with_note(lines, file)
end

--- The lines a read result shows, worded per result type; never an image's bytes.
function M.read_lines(result)
  local file = given(result.file) and result.file or {}
  local render = read[result.type]
  if render then
    return render(file)
  end
  return append(
    { "readkeeper: a result of type " .. str(result.type) .. " (this plugin does not know it yet):" },
    vim.inspect(without_payloads(result))
  )
end

--- The lines of a readkeeper/changes result: each file (where a moved one went) and its
--- diff and note, indented; then how many the token cap held back for the next call.
function M.changes_lines(result)
  local lines = {}
  for _, change in ipairs(result.changes or {}) do
    local where = given(change.new_path) and (" -> " .. change.new_path) or ""
    local cut = change.truncated and " (diff truncated: re-read the file)" or ""
    table.insert(lines, string.format("%s%s: %s%s", str(change.file_path), where, str(change.kind), cut))
    if given(change.note) and change.note ~= "" then
      table.insert(lines, "  note: " .. change.note)
    end
    if given(change.diff) and change.diff ~= "" then
      for _, line in ipairs(split(change.diff)) do
        table.insert(lines, "  " .. line)
      end
    end
  end
  if given(result.remaining) and result.remaining > 0 then
    table.insert(lines, string.format(
      "%s more changed file(s): run :ReadkeeperChanges again to see them", str(result.remaining)
    ))
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
