-- wrk script of the pay_from_balance orders scenario (bench/orders.mjs, bench/README.md).
--
--   wrk -t1 -c32 -d20s --latency -s bench/orders.lua http://127.0.0.1:PORT -- DATA_FILE
--
-- DATA_FILE (written by bench/orders.mjs into a temporary directory, never committed) holds one
-- item per line:
--   market m15           the market of every order
--   key <80 chars>       a registered agent key (autonomous funding on, balance funded)
--   deal <offer key>     a deal key of that market's current menu
-- Every request is POST /api/v1/orders by a random key for a random deal, qty 1, paid from the
-- agent's balance:
--   Authorization: Bearer <key>
--   {"market":"m15","offer_key":"<deal>","qty":1,"pay_from_balance":true}
-- response() tallies the answers by status and keeps a few bodies of non-201 answers; done()
-- prints one line `ORDERS_WRK_JSON {...}` with the tallies of all threads for the driver.

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

local keys, deals, market = {}, {}, "m15"
local auth = {}
local bodies = {}
statuses = {}
samples = {}
local nsamples = 0

function init(args)
  local file = args[1]
  if file == nil then
    error("usage: wrk ... -s bench/orders.lua URL -- DATA_FILE")
  end
  for line in io.lines(file) do
    local kind, value = line:match("^(%S+)%s+(%S+)%s*$")
    if kind == "key" then
      table.insert(keys, value)
    elseif kind == "deal" then
      table.insert(deals, value)
    elseif kind == "market" then
      market = value
    end
  end
  if #keys == 0 or #deals == 0 then
    error("orders.lua: " .. file .. " holds " .. #keys .. " keys and " .. #deals .. " deals")
  end
  for i, k in ipairs(keys) do
    auth[i] = "Bearer " .. k
  end
  for i, d in ipairs(deals) do
    bodies[i] = '{"market":"' .. market .. '","offer_key":"' .. d .. '","qty":1,"pay_from_balance":true}'
  end
  math.randomseed(os.time() * 1000 + (id or 0) * 7919)
  -- a few draws: the first values after randomseed are poorly mixed on some Lua builds
  for _ = 1, 10 do math.random() end
end

local headers = { ["Content-Type"] = "application/json", ["Authorization"] = "" }

function request()
  headers["Authorization"] = auth[math.random(#auth)]
  return wrk.format("POST", "/api/v1/orders", headers, bodies[math.random(#bodies)])
end

function response(status, hdrs, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status ~= 201 and nsamples < 5 then
    nsamples = nsamples + 1
    samples[nsamples] = status .. " " .. string.sub(body or "", 1, 300)
  end
end

local function quote(s)
  s = string.gsub(s, '[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    return string.format("\\u%04x", string.byte(c))
  end)
  return '"' .. s .. '"'
end

function done(summary, latency, requests)
  local total, out, samp = {}, {}, {}
  for _, t in ipairs(threads) do
    local st = t:get("statuses") or {}
    for code, n in pairs(st) do
      total[code] = (total[code] or 0) + n
    end
    local sm = t:get("samples") or {}
    for _, s in ipairs(sm) do
      if #samp < 10 then table.insert(samp, quote(s)) end
    end
  end
  for code, n in pairs(total) do
    table.insert(out, '"' .. code .. '":' .. string.format("%d", n))
  end
  io.write("ORDERS_WRK_JSON {\"statuses\":{" .. table.concat(out, ",") .. "},\"samples\":[" .. table.concat(samp, ",") .. "]}\n")
end
