// SPDX-License-Identifier: Apache-2.0
#include "sinks/html_why.h"

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "common/units.h"
#include "sinks/wait_text.h"

namespace wp {
namespace {

using json = nlohmann::ordered_json;

json short_frames(const std::vector<std::string>& frames) {
  json out = json::array();
  for (std::size_t i = 0; i < frames.size() && i < kWhyFrames; ++i)
    out.push_back(short_frame(frames[i]));
  return out;
}

json or_null(const std::optional<Nanos>& t) {
  return t ? json(*t) : json();
}

std::string offset(const std::optional<Nanos>& t, Nanos origin) {
  return t ? human_offset(relative_ns(*t, origin)) : "";
}

json waker_json(const Waker& w) {
  return {{"pid", w.pid},
          {"tid", w.tid},
          {"comm", w.comm},
          {"kernel_thread", w.kernel_thread},
          {"context", wake_context_name(w.context)},
          {"text", waker_text(w)},
          {"frames", short_frames(frame_names(w.stack))}};
}

json commit_json(const JournalCommit& c, Nanos origin) {
  json labels = {{"start", offset(c.start_ns, origin)}, {"end", offset(c.end_ns, origin)}};
  if (const auto ran = elapsed_ns(c.start_ns, c.end_ns)) labels["ran"] = human_duration(*ran);
  return {{"dev", dev_string(c.dev)},
          {"transaction", c.transaction},
          {"start_ns", or_null(c.start_ns)},
          {"end_ns", or_null(c.end_ns)},
          {"labels", std::move(labels)}};
}

json flush_json(const RequestTimeline& f, Nanos origin) {
  const auto device = elapsed_ns(request_start(f), f.complete_ns);
  json labels = {{"issue", offset(request_start(f), origin)},
                 {"device", device ? human_duration(*device) : "not completed"}};
  return {{"dev", dev_string(f.disk)},
          {"rwbs", rwbs(f.op, f.flags, f.bytes)},
          {"device_ns", or_null(device)},
          {"labels", std::move(labels)}};
}

json wait_json(const NamedWait& w, Nanos latency, Nanos origin) {
  const double share = latency ? static_cast<double>(w.ns) / static_cast<double>(latency) : 0.0;
  json flushes = json::array();
  for (const RequestTimeline& f : w.chain.flushes) flushes.push_back(flush_json(f, origin));
  return {{"cause", wait_cause_name(w.cause)},
          {"ns", w.ns},
          {"share", share},
          {"sleeps", w.sleeps},
          {"evidence", w.evidence},
          {"frames", short_frames(w.frames)},
          {"waker", w.waker ? waker_json(*w.waker) : json()},
          {"holder",
           w.holder ? json{{"pid", w.holder->pid}, {"tid", w.holder->tid}, {"comm", w.holder->comm}}
                    : json()},
          {"commit", w.chain.commit ? commit_json(*w.chain.commit, origin) : json()},
          {"flushes", std::move(flushes)},
          {"labels",
           {{"ns", human_duration(w.ns)},
            {"share", std::to_string(static_cast<int>(share * 100 + 0.5)) + "%"}}}};
}

}  // namespace

json why_entry(const Timeline& item, Nanos origin) {
  return std::visit(
      [origin](const auto& t) {
        const SyscallEvent& call = t.call;
        const Nanos latency = latency_ns(call);
        json waits = json::array();
        for (const NamedWait& w : t.causes->waits) waits.push_back(wait_json(w, latency, origin));
        using T = std::decay_t<decltype(t)>;
        const char* kind = std::is_same_v<T, WriteTimeline>  ? "write"
                           : std::is_same_v<T, ReadTimeline> ? "read"
                                                             : "sync";
        return json{{"id", t.id},
                    {"kind", kind},
                    {"syscall", call_name(call)},
                    {"pid", call.pid},
                    {"tid", call.tid},
                    {"comm", call.comm},
                    {"path", call.path.empty() ? json() : json(call.path)},
                    {"latency_ns", latency},
                    {"start_ns", call.start_ns},
                    {"unslotted_ns", t.causes->unslotted_ns},
                    {"labels",
                     {{"latency", human_duration(latency)},
                      {"start", human_offset(relative_ns(call.start_ns, origin))},
                      {"unslotted", human_duration(t.causes->unslotted_ns)}}},
                    {"waits", std::move(waits)}};
      },
      item);
}

}  // namespace wp
