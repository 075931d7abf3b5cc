-- test_lua_events.lua -- the time between two events when one of them has not completed (issue 28):
-- start:elapsed(stop) is refused, naming the reason, whichever of the two is still queued (behind
-- a long kernel) while the other is done, and answers once both have completed. On a GPU when
-- there is one, else on the CPU device.
local h = require "helper"
local cuda = require "cujit"

h.need_gpu(cuda)

local busy = h.busy_launcher(cuda)

h.test("elapsed is refused while either event is still queued, and answers after", function()
  local s1, s2 = cuda.stream(), cuda.stream()
  for _, queued_one in ipairs {"start", "stop"} do
    -- The busy kernel lasts about a second; if the machine was so slow that it ended before the
    -- events could be looked at, try again with a longer one (a test of order, not of time).
    local refused, scale = false, 1
    for _ = 1, 4 do
      local start, stop = cuda.event(), cuda.event()
      local slow = queued_one == "start" and start or stop
      local quick = slow == start and stop or start
      quick:record(s2) -- done before the other is queued
      quick:synchronize()
      h.eq(quick:query(), true, "the event recorded first is done")
      busy(s1, scale)
      slow:record(s1)
      if not slow:query() then
        h.raises("cujit_event_elapsed: an event has not completed yet", start.elapsed, start, stop)
        refused = true
      end
      s1:synchronize()
      h.eq(slow:query(), true, "done after its stream was synchronized")
      local ms = start:elapsed(stop)
      h.eq(math.type(ms), "float", "elapsed answers in milliseconds once both are done")
      if refused then break end
      scale = scale * 4
    end
    h.eq(refused, true, "the " .. queued_one .. " event was seen queued and elapsed refused")
  end
end)

h.run()
