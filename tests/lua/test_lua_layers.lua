-- test_lua_layers.lua -- the shape of the Lua binding's sources (engine/lua), read as text: a
-- ladder of files in which each includes only the headers of files below it (so no circle, and
-- nothing calls up into linit.c, the top), one header per file declaring only what that file
-- defines, a comment at the top of each file saying its role, and no file of 700 lines or more.
local h = require "helper"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local dir = here .. "/../../engine/lua/"

-- Bottom to top: a file may include the headers of the files before it, never after.
local LADDER = {"lstate", "lconv", "ldevice", "lstream", "lhost", "larray", "lcopy", "ltma", "lnccl",
                "loptions", "lkernel", "llaunch", "lprogram", "llibrary", "limage", "lfile", "lgraph", "lview",
                "lmanaged", "lcoop", "ldlpack", "linit"}
local rung = {}
for i, name in ipairs(LADDER) do rung[name] = i end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

local function files()
  local list = {}
  local p = assert(io.popen('ls "' .. dir .. '"'))
  for name in p:lines() do list[#list + 1] = name end
  p:close()
  return list
end

h.test("every file of engine/lua is on the ladder, with its own header", function()
  for _, name in ipairs(files()) do
    local base, ext = name:match("^(.-)%.(%a)$")
    h.check(base and rung[base], name .. " is not on the ladder of this test: place it there")
    if ext == "c" and base ~= "linit" then
      h.check(read(dir .. base .. ".h"), name .. " has no header " .. base .. ".h")
    end
  end
end)

h.test("includes point down only", function()
  for _, name in ipairs(files()) do
    local base = name:match("^(.-)%.%a$")
    for inc in read(dir .. name):gmatch('#include "(l%w+)%.h"') do
      h.check(rung[inc], name .. " includes " .. inc .. ".h, which is not on the ladder")
      h.check(rung[inc] <= rung[base],
              name .. " includes " .. inc .. ".h, a file above it: that is an upward arrow")
    end
  end
end)

h.test("headers declare only what their file defines", function()
  for _, name in ipairs(files()) do
    local base = name:match("^(.-)%.h$")
    if base then
      local c = read(dir .. base .. ".c")
      for fn in read(dir .. name):gmatch("[%w_%*]+%s+%**(cjl_[%w_]+)%(") do
        h.check(c:find("\n[%w_ %*]-[%s%*]" .. fn .. "%(") , name .. " declares " .. fn ..
                ", which " .. base .. ".c does not define")
      end
    end
  end
end)

h.test("one role per file: a top comment, under 700 lines", function()
  for _, name in ipairs(files()) do
    local text = read(dir .. name)
    h.check(text:match("^/%*\n%*%* " .. name:gsub("%.", "%%.") .. " %-%- "),
            name .. " does not start with a comment '** " .. name .. " -- its role'")
    local lines = select(2, text:gsub("\n", ""))
    h.check(lines < 700, name .. " has " .. lines .. " lines (keep files under 700)")
  end
end)

h.run()
