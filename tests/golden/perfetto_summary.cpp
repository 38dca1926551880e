// SPDX-License-Identifier: Apache-2.0
// The lines, in this order (times in microseconds from the trace's first timestamp; a slice's
// annotations sorted by name, a string value quoted when it has spaces or could read as a
// number, a bool or several values):
//   clocks MONOTONIC=0 REALTIME=0 BOOTTIME=0 primary=MONOTONIC
//   first timestamp 10us
//   track pid 100 "writer"                        a track by a stable label (pid, tid, or its
//   track tid 100 "writer" in pid 100             quoted name, numbered from the second of a
//   track "vda 253:0 #1" in "vda 253:0"           name on: "x" (2)), and its parent
//     0..20us "pwrite64 8 KiB" bytes=8192 …       its slices in time order, nested ones
//       5..9us "flush"                            indented under their parent; an instant
//     30us instant "name" …                       has one time
//   flow "pwrite64 8 KiB"@0us -> "W 8 KiB"@5030us an arrow from slice to slice, in time order
//   flow "W 8 KiB"@5030us -> none                 a flow no later slice continues
//   note packet 7: …                              a packet breaking the format's rules
// Slices and flows are rebuilt as the importer does: a track's events sorted by time (stable, so
// equal timestamps keep the order they were written in), an END closing the innermost open
// slice; a flow id joins the slices carrying it in time order and stops at a slice that
// terminates it. Left out, as the importer does not show them: the packets' order and the
// descriptors' timestamps (the one case kept whole in text protobuf holds those).
#include "perfetto_summary.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sinks/perfetto.pb.h"

namespace wp::golden {
namespace {

namespace pb = ::wp::perfetto;

// The sink's one sequence (perfetto_tracks.cpp).
constexpr std::uint32_t kSequenceId = 1;
// No event: an index rather than an optional, which gcc 12 at -O2 calls "maybe uninitialized".
constexpr std::size_t kNone = SIZE_MAX;

std::string quoted(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A string value as it is when that reads as one word and as no other kind of value; quoted
// otherwise (spaces, quotes, "=", empty, or a number's or a bool's spelling).
std::string value_text(const std::string& s) {
  const bool plain = !s.empty() && s != "true" && s != "false" &&
                     s.find_first_not_of("-.0123456789") != std::string::npos &&
                     std::all_of(s.begin(), s.end(), [](char c) {
                       const auto byte = static_cast<unsigned char>(c);
                       return byte > 0x20 && byte != 0x7f && c != '"' && c != '\\' && c != '=';
                     });
  return plain ? s : quoted(s);
}

// Exact: whole microseconds, or with the nanoseconds as a decimal fraction.
std::string micros(std::uint64_t ns) {
  std::string out = std::to_string(ns / 1000);
  if (const std::uint64_t frac = ns % 1000) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 3 - digits.size(), '0');
    digits.erase(digits.find_last_not_of('0') + 1);
    out += "." + digits;
  }
  return out;
}

std::string clock_name(std::uint32_t id) {
  if (!pb::BuiltinClock_IsValid(static_cast<int>(id))) return "clock" + std::to_string(id);
  const std::string& name = pb::BuiltinClock_Name(static_cast<pb::BuiltinClock>(id));
  constexpr std::string_view kPrefix = "BUILTIN_CLOCK_";
  return name.starts_with(kPrefix) ? name.substr(kPrefix.size()) : name;
}

struct Track {
  std::string label;
  std::string header;  // the rest of its `track` line
  std::vector<std::size_t> events;
};

struct Event {
  std::uint64_t ts = 0;
  std::size_t packet = 0;
  pb::TrackEvent::Type type = pb::TrackEvent::TYPE_UNSPECIFIED;
  std::string name;
  std::vector<std::pair<std::string, std::string>> args;  // name, rendered value
  std::string ref;                                        // "name"@time, once known
};

struct FlowStep {
  std::uint64_t ts = 0;
  std::size_t event = 0;
  bool terminating = false;
};

class Summary {
 public:
  explicit Summary(const pb::Trace& trace) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(trace.packet_size()); ++i)
      read(i, trace.packet(static_cast<int>(i)));
  }

  std::string lines() {
    std::string out;
    for (const auto& line : clocks_) out += line + "\n";
    const std::uint64_t first = first_ts_.value_or(0);
    if (first_ts_) out += "first timestamp " + micros(first) + "us\n";
    for (Event& e : events_) e.ref = quoted(e.name) + "@" + micros(e.ts - first) + "us";
    for (const std::uint64_t uuid : track_order_) {
      Track& track = tracks_[uuid];
      out += "track " + track.label + track.header + "\n";
      out += slices(track, first);
    }
    out += flows();
    for (const auto& note : notes_) out += "note " + note + "\n";
    return out;
  }

 private:
  void note(std::size_t packet, const std::string& what) {
    notes_.push_back("packet " + std::to_string(packet) + ": " + what);
  }

  void read(std::size_t i, const pb::TracePacket& packet) {
    if (packet.trusted_packet_sequence_id() != kSequenceId)
      note(i, "sequence " + std::to_string(packet.trusted_packet_sequence_id()));
    if (packet.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      state_valid_ = true;
      event_names_.clear();
      annotation_names_.clear();
    }
    if (i == 0 && !(packet.has_clock_snapshot() && state_valid_))
      note(i, "the first packet is not a clock snapshot clearing the incremental state");
    if (packet.has_timestamp()) {
      first_ts_ = std::min(first_ts_.value_or(packet.timestamp()), packet.timestamp());
      if (packet.timestamp_clock_id() != pb::BUILTIN_CLOCK_MONOTONIC)
        note(i, "timestamp on clock " + clock_name(packet.timestamp_clock_id()));
    }
    for (const auto& n : packet.interned_data().event_names()) intern(i, event_names_, n);
    for (const auto& n : packet.interned_data().debug_annotation_names())
      intern(i, annotation_names_, n);
    if (packet.has_clock_snapshot())
      read_clocks(packet.clock_snapshot());
    else if (packet.has_track_descriptor())
      describe(packet.track_descriptor());
    else if (packet.has_track_event())
      read_event(i, packet);
    else
      note(i, "no clock snapshot, track or event");
  }

  template <typename Entry>
  void intern(std::size_t packet, std::map<std::uint64_t, std::string>& table, const Entry& n) {
    if (n.iid() == 0) note(packet, "interned " + quoted(n.name()) + " as iid 0");
    auto [it, added] = table.try_emplace(n.iid(), n.name());
    if (!added && it->second != n.name())
      note(packet, "iid " + std::to_string(n.iid()) + " redefined as " + quoted(n.name()));
  }

  // The interned name, or an unresolved iid said in place and in a note.
  std::string resolve(std::size_t packet, const std::map<std::uint64_t, std::string>& table,
                      std::uint64_t iid) {
    if (auto it = table.find(iid); it != table.end()) return it->second;
    note(packet, "unresolved iid " + std::to_string(iid));
    return "iid " + std::to_string(iid);
  }

  void read_clocks(const pb::ClockSnapshot& snapshot) {
    std::string line = "clocks";
    for (const auto& c : snapshot.clocks())
      line += " " + clock_name(c.clock_id()) + "=" + std::to_string(c.timestamp());
    line += " primary=" + clock_name(snapshot.primary_trace_clock());
    clocks_.push_back(std::move(line));
  }

  // A label for a track described for the first time: its pid, tid or name, numbered from the
  // second of a kind on.
  std::string new_label(const pb::TrackDescriptor& d) {
    std::string label = d.has_thread()    ? "tid " + std::to_string(d.thread().tid())
                        : d.has_process() ? "pid " + std::to_string(d.process().pid())
                                          : quoted(d.name());
    const int seen = ++labels_[label];
    return seen == 1 ? label : label + " (" + std::to_string(seen) + ")";
  }

  void describe(const pb::TrackDescriptor& d) {
    auto [it, added] = tracks_.try_emplace(d.uuid());
    Track& track = it->second;
    std::string what;
    if (d.has_process()) what += " " + quoted(d.process().process_name());
    if (d.has_thread()) what += " " + quoted(d.thread().thread_name());
    if (d.has_name() && (d.has_process() || d.has_thread())) what += " named " + quoted(d.name());
    std::string parent;
    if (d.has_parent_uuid()) {
      auto p = tracks_.find(d.parent_uuid());
      parent = " in " + (p == tracks_.end() || p == it ? std::string("an undescribed track")
                                                       : p->second.label);
    }
    // A thread's pid is its parent process's unless said otherwise.
    if (d.has_thread() && parent != " in pid " + std::to_string(d.thread().pid()))
      what += " of pid " + std::to_string(d.thread().pid());
    if (added) {
      track.label = new_label(d);
      track_order_.push_back(d.uuid());
      track.header = what + parent;
    } else {
      // Described again (a process renamed by its main thread): each description in turn.
      track.header += "; then" + (what.empty() ? " " + quoted(d.name()) : what) + parent;
    }
  }

  void read_event(std::size_t i, const pb::TracePacket& packet) {
    const pb::TrackEvent& e = packet.track_event();
    Event event;
    event.ts = packet.timestamp();
    event.packet = i;
    event.type = e.type();
    event.name = e.name();
    bool interned = e.has_name_iid();
    if (e.has_name_iid()) event.name = resolve(i, event_names_, e.name_iid());
    for (const auto& a : e.debug_annotations()) {
      interned |= a.has_name_iid();
      std::string name = a.has_name_iid() ? resolve(i, annotation_names_, a.name_iid()) : a.name();
      std::string value = a.has_bool_value()     ? (a.bool_value() ? "true" : "false")
                          : a.has_uint_value()   ? std::to_string(a.uint_value())
                          : a.has_int_value()    ? std::to_string(a.int_value())
                          : a.has_string_value() ? value_text(a.string_value())
                                                 : "(no value)";
      event.args.emplace_back(std::move(name), std::move(value));
    }
    std::stable_sort(event.args.begin(), event.args.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (interned &&
        !(state_valid_ && (packet.sequence_flags() & pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE)))
      note(i, "interned names without SEQ_NEEDS_INCREMENTAL_STATE");
    if (!packet.has_timestamp()) note(i, "an event without a timestamp");
    if (!tracks_.contains(e.track_uuid())) {
      note(i, "an event on an undescribed track");
      tracks_[e.track_uuid()].label = "undescribed " + std::to_string(++undescribed_);
      track_order_.push_back(e.track_uuid());
    }
    if (e.type() == pb::TrackEvent::TYPE_SLICE_END &&
        (e.has_name_iid() || e.has_name() || !e.debug_annotations().empty() ||
         !e.flow_ids().empty() || !e.terminating_flow_ids().empty()))
      note(i, "an END with a name, annotations or flows");
    const std::size_t index = events_.size();
    for (const std::uint64_t id : e.flow_ids()) flows_[id].push_back({event.ts, index, false});
    for (const std::uint64_t id : e.terminating_flow_ids())
      flows_[id].push_back({event.ts, index, true});
    tracks_[e.track_uuid()].events.push_back(index);
    events_.push_back(std::move(event));
  }

  // The track's slices as the importer nests them.
  std::string slices(const Track& track, std::uint64_t first) {
    std::vector<std::size_t> order = track.events;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return events_[a].ts < events_[b].ts; });
    // A slice's time is known when its END comes; its line keeps the place of its BEGIN.
    struct Line {
      std::size_t depth = 0;
      std::string when;
      std::size_t event = 0;
    };
    std::vector<Line> lines;
    std::vector<std::size_t> open;  // indices into `lines`, innermost last
    for (const std::size_t index : order) {
      const Event& e = events_[index];
      const std::string at = micros(e.ts - first);
      if (e.type == pb::TrackEvent::TYPE_SLICE_END) {
        if (open.empty()) {
          note(e.packet, "an END with no slice open on track " + track.label);
          continue;
        }
        lines[open.back()].when += ".." + at + "us";
        open.pop_back();
      } else if (e.type == pb::TrackEvent::TYPE_SLICE_BEGIN) {
        lines.push_back({open.size(), at, index});
        open.push_back(lines.size() - 1);
      } else {
        const bool instant = e.type == pb::TrackEvent::TYPE_INSTANT;
        lines.push_back({open.size(), at + (instant ? "us instant" : "us untyped"), index});
      }
    }
    for (const std::size_t k : open) {
      lines[k].when += "..?";
      note(events_[lines[k].event].packet, "a slice never ended on track " + track.label);
    }
    std::string out;
    for (const Line& l : lines) {
      const Event& e = events_[l.event];
      out += std::string(2 * (l.depth + 1), ' ') + l.when + " " + quoted(e.name);
      for (const auto& [name, value] : e.args) out += " " + name + "=" + value;
      out += "\n";
    }
    return out;
  }

  // The arrows in time order (flow ids are random: their order says nothing).
  std::string flows() {
    struct Arrow {
      std::uint64_t from_ts = 0, to_ts = 0;
      std::string text;
      auto operator<=>(const Arrow&) const = default;
    };
    std::vector<Arrow> arrows;
    auto ref = [&](std::size_t event) { return event == kNone ? "none" : events_[event].ref; };
    auto arrow = [&](std::size_t from, std::size_t to) {
      const std::uint64_t to_ts = to == kNone ? events_[from].ts : events_[to].ts;
      arrows.push_back({from == kNone ? to_ts : events_[from].ts, to_ts,
                        "flow " + ref(from) + " -> " + ref(to)});
    };
    for (auto& [id, steps] : flows_) {
      std::stable_sort(steps.begin(), steps.end(),
                       [](const FlowStep& a, const FlowStep& b) { return a.ts < b.ts; });
      std::size_t from = kNone;   // the event the next arrow leaves
      bool from_reached = false;  // an arrow led into it
      for (const FlowStep& step : steps) {
        if (from != kNone || step.terminating) arrow(from, step.event);
        from_reached = from != kNone;
        from = step.terminating ? kNone : step.event;
      }
      // A flow begun on one slice and continued by none: the importer draws nothing.
      if (from != kNone && !from_reached) arrow(from, kNone);
    }
    std::sort(arrows.begin(), arrows.end());
    std::string out;
    for (const Arrow& a : arrows) out += a.text + "\n";
    return out;
  }

  bool state_valid_ = false;
  std::optional<std::uint64_t> first_ts_;
  std::vector<std::string> clocks_;
  std::map<std::uint64_t, std::string> event_names_;
  std::map<std::uint64_t, std::string> annotation_names_;
  std::map<std::uint64_t, Track> tracks_;
  std::vector<std::uint64_t> track_order_;
  std::map<std::string, int> labels_;
  int undescribed_ = 0;
  std::vector<Event> events_;
  std::map<std::uint64_t, std::vector<FlowStep>> flows_;
  std::vector<std::string> notes_;
};

}  // namespace

std::string perfetto_summary(const perfetto::Trace& trace) {
  return Summary(trace).lines();
}

}  // namespace wp::golden
