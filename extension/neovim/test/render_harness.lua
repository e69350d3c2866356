-- Renders the results in the JSON file $READKEEPER_CASES with the plugin's renderer
-- (render.lua) and writes the texts, as a JSON array, to $READKEEPER_TEST_OUT:
-- tests/editors/test_neovim_forgery.py checks, for results naming any file and holding
-- any of its text, that every line is readkeeper's own. Then quits Neovim.
local render = require("readkeeper.render")

local function render_case(kind, value)
  if kind == "read" then
    return render.read_lines(value)
  elseif kind == "changes" then
    return render.changes_lines(value)
  elseif kind == "notice" then
    return { render.notice_line(value) }
  elseif kind == "error" then
    return { render.error_text(value) }
  elseif kind == "marks" then
    return { render.marks(value) }
  elseif kind == "stats" then
    return render.stats_lines(value)
  end
  return nil -- edits, writes and attachments are not shown by this plugin
end

local ok, err = pcall(function()
  local cases = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv("READKEEPER_CASES")), "\n"))
  local texts = {}
  for _, case in ipairs(cases) do
    local lines = render_case(case[1], case[2])
    table.insert(texts, lines and table.concat(lines, "\n") or vim.NIL)
  end
  vim.fn.writefile({ vim.fn.json_encode(texts) }, os.getenv("READKEEPER_TEST_OUT"))
end)
if not ok then
  vim.fn.writefile({ vim.fn.json_encode({ error = tostring(err) }) }, os.getenv("READKEEPER_TEST_OUT"))
end
vim.cmd("qa!")
