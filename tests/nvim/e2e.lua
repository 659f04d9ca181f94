-- Neovim (0.7, headless) as a client of `lark serve`: open a racy CUDA file, collect the
-- diagnostics, a hover, the code lenses and the code actions on the race, apply the barrier fix
-- and collect the diagnostics again. Everything seen is written as JSON to $LARK_NVIM_OUT.
-- Run by run.sh; 0.7 has no vim.lsp.start, so the client is started and attached by hand.

local lark = os.getenv('LARK_BIN')
local file = os.getenv('LARK_NVIM_FILE')
local out = os.getenv('LARK_NVIM_OUT')
local result = { steps = {} }

local function step(name)
  table.insert(result.steps, name)
end

local function code_of(d)
  if d.code ~= nil then return d.code end
  local lsp = d.user_data and d.user_data.lsp
  return lsp and lsp.code
end

local function collect(buf)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(list, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      severity = d.severity, message = d.message, source = d.source, code = code_of(d),
    })
  end
  return list
end

local function first_result(responses)
  for _, r in pairs(responses or {}) do
    if r.err then error('server error: ' .. vim.inspect(r.err)) end
    if r.result ~= nil then return r.result end
  end
  return nil
end

local function run()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start_client({
    name = 'lark',
    cmd = { lark, 'serve' },
    root_dir = vim.fn.fnamemodify(file, ':h'),
    init_options = { smt = { timeoutMs = 2000 }, logLevel = 'warn' },
  })
  assert(id, 'lark serve did not start')
  vim.lsp.buf_attach_client(buf, id)
  step('attached')

  local function race()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if code_of(d) == 'race' then return d end
    end
  end
  assert(vim.wait(60000, function() return race() ~= nil end, 20), 'no race diagnostic within 60 s')
  result.diagnostics = collect(buf)
  step('diagnostics')
  local r = race()
  local doc = { uri = vim.uri_from_bufnr(buf) }

  local hover = first_result(vim.lsp.buf_request_sync(buf, 'textDocument/hover',
    { textDocument = doc, position = { line = r.lnum, character = r.col } }, 30000))
  result.hover = hover and hover.contents and hover.contents.value
  step('hover')

  local lenses = first_result(vim.lsp.buf_request_sync(buf, 'textDocument/codeLens', { textDocument = doc }, 30000)) or {}
  result.lenses = {}
  for _, l in ipairs(lenses) do table.insert(result.lenses, l.command and l.command.title) end
  step('codeLens')

  local range = { start = { line = r.lnum, character = r.col }, ['end'] = { line = r.end_lnum, character = r.end_col } }
  -- The server answers within a second with what it has; a fix search that takes longer goes on
  -- in the background and is offered when the editor asks again (as it does on cursor moves).
  local fix
  local deadline = vim.loop.now() + 60000
  repeat
    local actions = first_result(vim.lsp.buf_request_sync(buf, 'textDocument/codeAction',
      { textDocument = doc, range = range, context = { diagnostics = {} } }, 60000)) or {}
    result.actions = {}
    for _, a in ipairs(actions) do
      table.insert(result.actions, a.title)
      if a.title:find('__syncthreads', 1, true) then fix = a end
    end
    if not fix then vim.wait(200) end
  until fix or vim.loop.now() > deadline
  step('codeAction')

  assert(fix, 'no barrier fix among the code actions')
  vim.lsp.util.apply_workspace_edit(fix.edit, 'utf-16')
  result.fixed_line = vim.api.nvim_buf_get_lines(buf, 11, 12, false)[1]
  assert(vim.wait(60000, function() return race() == nil and vim.b.changedtick ~= nil end, 20), 'the race stayed after the fix')
  -- the diagnostics of the edited version have arrived when no race is left
  result.after_fix = collect(buf)
  step('fixed')
  result.ok = true
end

local ok, err = pcall(run)
if not ok then result.error = tostring(err) end
local f = assert(io.open(out, 'w'))
f:write(vim.fn.json_encode(result))
f:close()
vim.cmd('qa!')
