-- ingest.lua: wrk script for bench/ingest.sh.
--
-- Measures Cairn's ingest hot path: every request is a Claude Code
-- PostToolUse hook (~2 KB JSON) posted to POST /v1/hooks/claude-code.
--
--   wrk -t2 -c8 -d20s --latency -s bench/ingest.lua \
--       -H "Authorization: Bearer $TOKEN" http://127.0.0.1:18080/v1/hooks/claude-code \
--       -- <run-label> <path/to/tool_response.txt>
--
-- * tool_use_id is unique per request (run label + thread id + per-thread
--   counter): the API deduplicates events by session_id + tool_use_id, so a
--   repeated id would measure the duplicate path instead of an insert. Use a
--   different run label for every wrk invocation against the same database.
-- * Requests are spread over 64 session ids (counter % 64), like 64 agents
--   working at once: each session's open turn job is a row every event of
--   that session updates, so fewer sessions means more lock contention.
-- * done() prints one machine-readable line, WRK_RESULT key=value ..., that
--   ingest.sh parses; latencies there are in microseconds.

local SESSIONS = tonumber(os.getenv("SESSIONS") or "64") -- ingest.sh exports it

local threads = {}
local next_tid = 0

-- Runs once per thread, in the main Lua state, before the threads start.
function setup(thread)
   next_tid = next_tid + 1
   thread:set("tid", next_tid)
   table.insert(threads, thread)
end

local function json_escape(s)
   s = s:gsub("\\", "\\\\")
   s = s:gsub('"', '\\"')
   s = s:gsub("\n", "\\n")
   s = s:gsub("\r", "\\r")
   s = s:gsub("\t", "\\t")
   return s
end

local run, head, middle, tail
local counter = 0
non2xx = 0
first_bad = ""

-- Runs in each thread's own Lua state; `tid` was set by setup().
function init(args)
   run = args[1] or "run"
   local path = args[2] or "bench/tool_response.txt"
   local f = assert(io.open(path, "rb"), "cannot open " .. path)
   local content = json_escape(f:read("*a"))
   f:close()
   -- The body is assembled from three constant parts around the two
   -- per-request values, so building a request costs two concatenations.
   -- Session ids are the same in every run, so the warm-up creates them.
   head = '{"session_id":"bench-session-'
   middle = '","transcript_path":"/home/dev/.claude/projects/-home-dev-app/transcript.jsonl",'
      .. '"cwd":"/home/dev/app","hook_event_name":"PostToolUse","permission_mode":"default",'
      .. '"tool_name":"Read","tool_use_id":"toolu_bench_' .. run .. '_t' .. tid .. '_'
   tail = '","tool_input":{"file_path":"src/main.rs"},'
      .. '"tool_response":{"content":"' .. content .. '"}}'
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/json"
end

function request()
   counter = counter + 1
   local body = head .. (counter % SESSIONS) .. middle .. counter .. tail
   return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
   if status < 200 or status > 299 then
      non2xx = non2xx + 1
      if first_bad == "" then
         first_bad = status .. " " .. string.sub(body or "", 1, 300)
      end
   end
end

function done(summary, latency, requests)
   local bad, sample = 0, ""
   for _, t in ipairs(threads) do
      bad = bad + (t:get("non2xx") or 0)
      local s = t:get("first_bad")
      if sample == "" and s and s ~= "" then
         sample = s
      end
   end
   local e = summary.errors
   io.write(string.format(
      "WRK_RESULT requests=%d duration_us=%d non2xx=%d status_errors=%d connect_errors=%d "
         .. "read_errors=%d write_errors=%d timeouts=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d mean_us=%.0f\n",
      summary.requests, summary.duration, bad, e.status, e.connect, e.read, e.write, e.timeout,
      latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
   if sample ~= "" then
      io.write("WRK_FIRST_BAD_RESPONSE " .. sample:gsub("\n", " ") .. "\n")
   end
end
