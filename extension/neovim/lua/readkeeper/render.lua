-- readkeeper's results as text for the user: the lines of a result window, the one-line
-- notice that files the agent read changed, and a JSON-RPC error as a message. The
-- plugin's one place that turns a result into words.

local M = {}

-- Bytes from files and file names are shown inside a structure readkeeper controls, by
-- the server's rules (server/quoting.py): a name bare when plain (letters, digits,
-- `._-/+@,=~`), else quoted with its controls escaped; a file's lines break at LF only,
-- every other line break (CR, VT, FF, U+001C-001E, NEL, U+2028, U+2029) escaped inside
-- the line; notebook cells fenced with more backticks than any run inside them.
local BREAKS = {
  ["\r"] = "\\r", ["\v"] = "\\x0b", ["\f"] = "\\x0c",
  ["\28"] = "\\x1c", ["\29"] = "\\x1d", ["\30"] = "\\x1e",
  ["\194\133"] = "\\x85", ["\226\128\168"] = "\\u2028", ["\226\128\169"] = "\\u2029",
}

--- A file's text as shown: every line break but LF escaped.
function M.file_text(text)
  text = tostring(text or "")
  text = text:gsub("[\r\v\f\28-\30]", BREAKS)
  text = text:gsub("\194\133", BREAKS["\194\133"])
  text = text:gsub("\226\128[\168\169]", BREAKS)
  return text
end

-- A name is plain (shown bare) only when every character is an ASCII letter or digit or
-- one of `._-/+@,=~`: an allowlist, so a space, `:`, `?`, `#`, a quote, a control or a
-- character nobody thought of makes it quoted and it cannot continue readkeeper's
-- sentence. The server allows letters of any script; Lua's patterns know no Unicode
-- classes, so here any other character is quoted (stricter, never looser). Nor may a
-- bare name take the shape of a line readkeeper prints (the server's LINE_SHAPES):
-- grep's context line `path-N-text` (and a name ending `-N` before it), a listing's
-- link mark `@` after a name, grep's `--` and the drop-in's `---` separators.
local function odd(text)
  return text == ""
    or text:find("[^%w._%-/+@,=~]") ~= nil
    or text:find("%-%d+%-") ~= nil
    or text:find("%-%d+$") ~= nil
    or text:find("@$") ~= nil
    or text:find("^%-+$") ~= nil
end

-- The code points a reader would not see or that reorder text, beyond the controls
-- (what the server's str.isprintable rejects): format characters (bidirectional marks,
-- overrides and isolates, zero-width characters, the byte-order mark, the soft hyphen,
-- tags), separators but the space, private use, surrogates and noncharacters. Unicode's
-- unassigned code points are the one class Lua cannot list.
local HIDDEN = {
  { 0x80, 0xA0 }, { 0xAD, 0xAD }, { 0x600, 0x605 }, { 0x61C, 0x61C }, { 0x6DD, 0x6DD },
  { 0x70F, 0x70F }, { 0x890, 0x891 }, { 0x8E2, 0x8E2 }, { 0x1680, 0x1680 },
  { 0x180E, 0x180E }, { 0x2000, 0x200F }, { 0x2028, 0x202F }, { 0x205F, 0x2064 },
  { 0x2066, 0x206F }, { 0x3000, 0x3000 }, { 0xD800, 0xF8FF }, { 0xFDD0, 0xFDEF },
  { 0xFEFF, 0xFEFF }, { 0xFFF9, 0xFFFB }, { 0xFFFE, 0xFFFF }, { 0x110BD, 0x110BD },
  { 0x110CD, 0x110CD }, { 0x13430, 0x1343F }, { 0x1BCA0, 0x1BCA3 }, { 0x1D173, 0x1D17A },
  { 0xE0001, 0xE0001 }, { 0xE0020, 0xE007F }, { 0xF0000, 0x10FFFF },
}

local function hidden(code)
  if code % 0x10000 >= 0xFFFE then
    return true -- a noncharacter of any plane
  end
  for _, range in ipairs(HIDDEN) do
    if code >= range[1] and code <= range[2] then
      return true
    end
  end
  return false
end

-- One UTF-8 sequence as JSON's escape of it when it is hidden (two UTF-16 halves past
-- U+FFFF, as JSON spells them), else as it is.
local function escape_hidden(sequence)
  local first, n = sequence:byte(1), #sequence
  local code
  if n == 2 and first >= 0xC0 then
    code = (first % 0x20) * 0x40 + sequence:byte(2) % 0x40
  elseif n == 3 and first >= 0xE0 then
    code = ((first % 0x10) * 0x40 + sequence:byte(2) % 0x40) * 0x40 + sequence:byte(3) % 0x40
  elseif n == 4 and first >= 0xF0 then
    code = (((first % 0x08) * 0x40 + sequence:byte(2) % 0x40) * 0x40 + sequence:byte(3) % 0x40)
        * 0x40
      + sequence:byte(4) % 0x40
  end
  if code == nil or not hidden(code) then
    return sequence
  end
  if code < 0x10000 then
    return string.format("\\u%04x", code)
  end
  code = code - 0x10000
  return string.format("\\u%04x\\u%04x", 0xD800 + math.floor(code / 0x400), 0xDC00 + code % 0x400)
end

-- readkeeper's cut markers inside a shown line (server/quoting.py's `marks`): the `[`
-- (or its fullwidth form) that opens a cut marker's words, a read's `[line cut: N more
-- characters]`, a snippet's `[line cut: N more]`, a notebook output's `[N characters
-- cut]`, in any case, letters in their fullwidth forms too, with a run of at most 8
-- characters but letters and digits between letters and words (a count: at most 24
-- digits, commas or periods). Lua's patterns are no regexes and know no Unicode classes:
-- a scanner after each `[`, bounded as the server's pattern is (linear in the text), in
-- which any character but an ASCII or fullwidth letter or digit may be a gap, and any
-- but those letters, blanks and punctuation a digit (of other scripts' letters and
-- digits Lua knows nothing: a few more `[` escaped than the server's, never fewer).

-- The code point at byte `i` of `text` and the byte after it (a stray byte: itself).
local function code_at(text, i)
  local c = text:byte(i)
  if c == nil then
    return nil, i
  end
  local n = c >= 0xF0 and 4 or c >= 0xE0 and 3 or c >= 0xC0 and 2 or 1
  local code = n == 1 and c or c % (2 ^ (7 - n))
  for k = 1, n - 1 do
    local b = text:byte(i + k)
    if b == nil or b < 0x80 or b > 0xBF then
      return c, i + 1
    end
    code = code * 0x40 + b % 0x40
  end
  return code, i + n
end

local function fullwidth_letter(code)
  return (code >= 0xFF21 and code <= 0xFF3A) or (code >= 0xFF41 and code <= 0xFF5A)
end

local function is_gap(code)
  if code < 0x80 then
    return not string.char(code):match("%w")
  end
  return not fullwidth_letter(code) and not (code >= 0xFF10 and code <= 0xFF19)
end

local function is_count(code)
  if code < 0x80 then
    return string.char(code):match("[%d,.]") ~= nil
  elseif code == 0xFF0C or code == 0xFF0E or (code >= 0xFF10 and code <= 0xFF19) then
    return true -- the fullwidth comma, period and digits
  elseif code >= 0xFF00 and code <= 0xFFEF then
    return false -- the other fullwidth forms: letters and punctuation
  end
  -- a digit of another script, or what Lua cannot tell from one; never a blank, a
  -- format character or punctuation (U+2010-2E7F, whose numbers are no decimal digits)
  return not hidden(code) and not (code >= 0x2010 and code <= 0x2E7F)
end

-- After at most `most` gap characters from byte `i`: the byte where the next is.
local function skip_gap(text, i, most)
  for _ = 1, most do
    local code, after = code_at(text, i)
    if code == nil or not is_gap(code) then
      return i
    end
    i = after
  end
  return i
end

-- The byte after `letters` (ASCII, lower case) from byte `i`, each in either case or its
-- fullwidth forms, a gap of at most 8 between them; nil when they are not there.
local function word_at(text, i, letters)
  for k = 1, #letters do
    if k > 1 then
      i = skip_gap(text, i, 8)
    end
    local code, after = code_at(text, i)
    local lower = letters:byte(k)
    local upper = lower - 0x20
    if code ~= lower and code ~= upper and code ~= lower + 0xFEE0 and code ~= upper + 0xFEE0 then
      return nil
    end
    i = after
  end
  return i
end

-- Whether the count's words (`characters cut`, the `s` optional) follow at byte `i`.
local function count_words(text, i)
  i = word_at(text, skip_gap(text, i, 8), "character")
  if i == nil then
    return false
  end
  local gap = skip_gap(text, i, 8)
  local s = word_at(text, gap, "s")
  if s ~= nil then
    return word_at(text, skip_gap(text, s, 8), "cut") ~= nil
  end
  return word_at(text, skip_gap(text, gap, 8), "cut") ~= nil -- two gaps, no `s` between
end

-- Whether a cut marker's words follow the `[` that ends before byte `i`.
local function opens_cut_words(text, i)
  -- the leading gap and the count may share characters (`,` `.` are both): every split
  -- of at most 8 + 24 characters is tried, a constant per `[`.
  local starts = { i }
  for _ = 1, 8 do
    local code, after = code_at(text, starts[#starts])
    if code == nil or not is_gap(code) then
      break
    end
    table.insert(starts, after)
  end
  for _, start in ipairs(starts) do
    local line = word_at(text, start, "line")
    if line ~= nil and word_at(text, skip_gap(text, line, 8), "cut") ~= nil then
      return true
    end
    local at = start
    for _ = 1, 24 do
      local code, after = code_at(text, at)
      if code == nil or not is_count(code) then
        break
      end
      at = after
      if count_words(text, at) then
        return true
      end
    end
  end
  return false
end

--- A file's text with each `[` that opens a cut marker's words shown as `\x5b` (the
--- fullwidth one as `\uff3b`): so a raw `[line cut: ...]` or `[N characters cut]` is
--- always readkeeper's. For a file's raw text this renderer shows (a notebook cell's
--- source); the server's views (numbered lines, diffs, outputs) come escaped already.
function M.marks(text)
  text = tostring(text or "")
  if not text:find("[", 1, true) and not text:find("\239\188\187", 1, true) then
    return text
  end
  local out, last, i = {}, 1, 1
  while i <= #text do
    local wide = text:sub(i, i + 2) == "\239\188\187"
    if text:byte(i) == 0x5B or wide then
      local after = i + (wide and 3 or 1)
      if opens_cut_words(text, after) then
        table.insert(out, text:sub(last, i - 1))
        table.insert(out, wide and "\\uff3b" or "\\x5b")
        last = after
      end
      i = after
    else
      i = i + 1
    end
  end
  table.insert(out, text:sub(last))
  return table.concat(out)
end

--- A path, symbol or label as shown in readkeeper's words: bare when plain, else a
--- quoted string with its controls and hidden characters escaped (as JSON spells them).
function M.name(value)
  local text = tostring(value)
  if not odd(text) then
    return text
  end
  local simple = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
  local inner = text:gsub('[%z\1-\31\127"\\]', function(c)
    return simple[c] or string.format("\\u%04x", c:byte())
  end)
  inner = inner:gsub("[\192-\247][\128-\191]*", escape_hidden)
  return '"' .. inner .. '"'
end

--- `body` (a file's text) between backtick fences longer than any run inside it.
function M.fence(body)
  body = tostring(body or "")
  local longest = 0
  for run in body:gmatch("`+") do
    longest = math.max(longest, #run)
  end
  local ticks = string.rep("`", math.max(3, longest + 1))
  if body:sub(-1) == "\n" then
    body = body:sub(1, -2)
  end
  if body == "" then
    return ticks .. "\n" .. ticks
  end
  return ticks .. "\n" .. M.file_text(body) .. "\n" .. ticks
end

local function split(text)
  return vim.split(M.file_text(text), "\n", { plain = true })
end

-- A JSON null arrives as nil or vim.NIL, depending on the Neovim version.
local function given(value)
  return value ~= nil and value ~= vim.NIL
end

local function str(value)
  return given(value) and tostring(value) or "?"
end

-- A name from a result (a path, a cell id), quoted when odd; "?" when missing.
local function named(value)
  return given(value) and M.name(value) or "?"
end

local function append(lines, text)
  for _, line in ipairs(split(text)) do
    table.insert(lines, line)
  end
  return lines
end

local function with_note(lines, file)
  if given(file.note) and file.note ~= "" then
    table.insert(lines, "note: " .. M.file_text(file.note))
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

-- An image, PDF or notebook: the pages, cells or image size held, from the stub's fields.
local function document_held(file)
  if (file.held_type == "pdf" or file.held_type == "parts") and given(file.shown_pages) then
    local as = file.held_type == "parts" and "rendered as PNG images" or "as text"
    return string.format("pages %s of %s %s", file.shown_pages, str(file.page_count), as)
  end
  if file.held_type == "notebook" and given(file.first_cell) and given(file.num_cells) then
    local images = file.include_images and "and images" or "(images as placeholders)"
    return string.format(
      "cells %s-%s of %s, with outputs %s",
      file.first_cell,
      file.first_cell + file.num_cells - 1,
      str(file.total_cells),
      images
    )
  end
  if file.held_type == "image" and given(file.display_width) then
    return string.format(
      "the image as sent (%sx%s, from %sx%s, %s tokens)",
      file.display_width,
      str(file.display_height),
      str(file.original_width),
      str(file.original_height),
      str(file.tokens)
    )
  end
  return nil
end

local function held(file)
  local what = document_held(file) or "what you got"
  if given(file.start_line) and given(file.num_lines) then
    what = string.format("lines %s-%s", file.start_line, file.start_line + file.num_lines - 1)
    if given(file.total_lines) then
      what = what .. " of " .. file.total_lines
    end
  end
  if given(file.symbol) then
    what = named(file.symbol) .. " (" .. what .. ")"
  end
  local how = HOW[file.obtained_by] or HOW.read
  if given(file.obtained_at) then
    how = how .. " at " .. file.obtained_at
  end
  local line = string.format("file_unchanged: %s, %s, %s", named(file.file_path), what, how)
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
  local lines = { string.format("file_changed: %s, %s tokens", named(file.file_path), str(file.tokens)) }
  return with_note(append(lines, file.diff), file)
end

function read.estimate(file)
  return with_note({ string.format("estimate: %s, %s tokens", named(file.file_path), str(file.tokens)) }, file)
end

function read.outline(file)
  local lines = {
    string.format(
      "%s: outline of %s lines (%s), %s of %s symbols, %s tokens",
      named(file.file_path), str(file.total_lines), named(file.language),
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
      named(file.file_path), given(file.format) and M.name(file.format) or "image",
      str(dims.original_width), str(dims.original_height),
      str(dims.display_width), str(dims.display_height), str(file.tokens)
    ),
  }, file)
end

function read.pdf(file)
  local head = string.format(
    "%s: PDF, pages %s of %s, %s tokens",
    named(file.file_path), str(file.shown_pages), str(file.page_count), str(file.tokens)
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
    named(file.file_path), table.concat(numbers, ", "), str(file.page_count), named(file.output_dir)
  )
  if file.partial and given(file.next_pages) then
    head = head .. "; continue with pages='" .. file.next_pages .. "', render=true"
  end
  local lines = { head }
  for _, page in ipairs(given(file.pages) and file.pages or {}) do
    table.insert(lines, M.name(page))
  end
  return with_note(lines, file)
end

function read.notebook(file)
  local cells = given(file.cells) and file.cells or {}
  local shows = str(file.total_cells) .. " cells"
  -- A view of some of the cells says which (as offset counts them): ids are not numbers.
  if #cells > 0 and #cells ~= file.total_cells then
    local first = (given(cells[1].index) and cells[1].index or 0) + 1
    local last = first + #cells - 1
    local which = first == last and ("cell " .. first) or string.format("cells %d-%d", first, last)
    shows = which .. " of " .. str(file.total_cells)
  end
  local head = string.format("%s: notebook, %s", named(file.file_path), shows)
  if file.unsaved then
    head = head .. "; " .. string.format(UNSAVED, str(file.buffer_version))
  end
  if file.partial and given(file.next_offset) then
    head = head .. "; more: read with offset=" .. str(file.next_offset)
    if file.include_images then
      head = head .. ", include_images=true"
    end
  end
  local lines = { head }
  for _, cell in ipairs(given(file.cells) and file.cells or {}) do
    local count = given(cell.execution_count) and (" [" .. tostring(cell.execution_count) .. "]") or ""
    table.insert(lines, string.format("--- cell %s (%s)%s ---", named(cell.cell_id), named(cell.cell_type), count))
    -- the source as the file holds it: its cut markers' `[` escaped (outputs come so)
    append(lines, M.fence(M.marks(cell.source)))
    for _, output in ipairs(given(cell.outputs) and cell.outputs or {}) do
      local body = ""
      for _, field in ipairs({ "text", "traceback", "evalue" }) do
        if given(output[field]) and output[field] ~= "" then
          body = output[field]
          break
        end
      end
      -- (its images go unshown: their bytes are not text)
      -- an error's name, quoted when odd, as its type is
      local ename = (given(output.ename) and output.ename ~= "") and (" " .. M.name(output.ename)) or ""
      table.insert(lines, ">>> " .. named(output.output_type) .. ename .. ":")
      if body ~= "" then
        append(lines, M.fence(body))
      end
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
    { "readkeeper: a result of type " .. named(result.type) .. " (this plugin does not know it yet):" },
    vim.inspect(without_payloads(result))
  )
end

--- The lines of a readkeeper/changes result: each file (where a moved one went) and its
--- diff and note, indented; then how many the token cap held back for the next call.
function M.changes_lines(result)
  local lines = {}
  for _, change in ipairs(result.changes or {}) do
    local where = given(change.new_path) and (" -> " .. M.name(change.new_path)) or ""
    local cut = change.truncated and " (diff truncated: re-read the file)" or ""
    table.insert(lines, string.format("%s%s: %s%s", named(change.file_path), where, named(change.kind), cut))
    if given(change.note) and change.note ~= "" then
      table.insert(lines, "  note: " .. M.file_text(change.note))
    end
    if given(change.diff) and change.diff ~= "" then
      for _, line in ipairs(split(change.diff)) do
        table.insert(lines, "  " .. line)
      end
    end
  end
  if given(result.remaining) and result.remaining > 0 then
    table.insert(lines, string.format(
      "%s more changed %s: run :ReadkeeperChanges again to see them", str(result.remaining),
      result.remaining == 1 and "file" or "files"
    ))
  end
  if #lines == 0 then
    lines = { "No file read in this session has changed since." }
  end
  return lines
end

-- A value in the stats view: a string (a path, a state) as a name (M.name: bare when
-- plain, else quoted with its line breaks escaped), a number or flag as itself.
local function stat_value(value)
  return type(value) == "string" and M.name(value) or str(value)
end

--- The lines of a value under `key`, indented by `depth`: a table's entries (sorted,
--- nested ones indented below their key, each key a name: a file's path is one), a
--- list's items on one line.
local function stat_lines(lines, key, value, depth)
  local pad = string.rep("  ", depth)
  if type(value) ~= "table" then
    table.insert(lines, pad .. key .. ": " .. stat_value(value))
    return
  end
  if vim.tbl_islist(value) then
    local items = vim.tbl_map(function(item)
      return type(item) == "table" and M.file_text(vim.inspect(item, { newline = " ", indent = "" }))
        or stat_value(item)
    end, value)
    table.insert(lines, pad .. key .. ": " .. (#items > 0 and table.concat(items, ", ") or "none"))
    return
  end
  table.insert(lines, pad .. key .. ":")
  local keys = vim.tbl_keys(value)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  for _, name in ipairs(keys) do
    stat_lines(lines, M.name(tostring(name)), value[name], depth + 1)
  end
end

--- The lines of a readkeeper/stats result: one `key: value` a line, nested counters
--- indented under their group (a file's path is a key like any other).
function M.stats_lines(result)
  local lines = {}
  local keys = vim.tbl_keys(result or {})
  table.sort(keys, function(a, b)
    -- the counters first, the rest after, each group alphabetical
    local order = { total = 1, session = 2 }
    return (order[a] or 3) < (order[b] or 3) or ((order[a] or 3) == (order[b] or 3) and a < b)
  end)
  for _, key in ipairs(keys) do
    stat_lines(lines, M.name(key), result[key], 0)
  end
  return lines
end

--- One line for a readkeeper/didChangeReadFiles notice, or nil when it names no file.
function M.notice_line(params)
  local files = {}
  for _, change in ipairs((params and params.changes) or {}) do
    local shown = M.name(vim.fn.fnamemodify(change.file_path or "?", ":~:."))
    table.insert(files, shown .. " (" .. M.name(change.kind or "changed") .. ")")
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
  return M.file_text(kind .. (err.message or vim.inspect(err)))
end

return M
