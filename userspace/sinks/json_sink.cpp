#include "sinks/json_sink.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>

#include "common/units.h"

namespace wp {

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    // Most text (process names, syscall and state names) is plain ASCII: copy runs of it whole.
    std::size_t plain = i;
    while (plain < size && bytes[plain] >= 0x20 && bytes[plain] < 0x80 && bytes[plain] != '"' &&
           bytes[plain] != '\\')
      ++plain;
    if (plain > i) {
      out.append(text.substr(i, plain - i));
      i = plain;
      continue;
    }
    const unsigned char c = bytes[i];
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\t': out += "\\t"; break;
        case '\n': out += "\\n"; break;
        case '\f': out += "\\f"; break;
        case '\r': out += "\\r"; break;
        default:
          if (c < 0x20) {
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    // The well-formed multi-byte sequences (Unicode table 3-7): the lead byte fixes the length
    // and the range of the second byte (no overlongs, no surrogates, nothing past U+10FFFF).
    std::size_t length = 0;
    unsigned char second_low = 0x80, second_high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) second_low = 0xA0;
      if (c == 0xED) second_high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) second_low = 0x90;
      if (c == 0xF4) second_high = 0x8F;
    } else {
      out += kReplacement;  // a byte that never starts a character
      ++i;
      continue;
    }
    std::size_t valid = 1;
    for (; valid < length && i + valid < size; ++valid) {
      const unsigned char next = bytes[i + valid];
      const unsigned char low = valid == 1 ? second_low : 0x80;
      const unsigned char high = valid == 1 ? second_high : 0xBF;
      if (next < low || next > high) break;
    }
    if (valid == length) {
      out.append(text.substr(i, length));
    } else {
      // One U+FFFD for the truncated sequence; the byte that broke it starts afresh, as
      // nlohmann::json's replace handler does.
      out += kReplacement;
    }
    i += valid;
  }
}

namespace {

using Buffer = rapidjson::StringBuffer;
using Writer = rapidjson::Writer<Buffer>;

// Device 0 (major 0, minor 0) is never a real device: the anonymous-dev allocator starts at
// minor 1. The stitcher leaves it 0 when a call has no file (sync(2)).
constexpr bool is_real_dev(DevT dev) {
  return dev != 0;
}

Nanos latency_ns(const SyscallEvent& call) {
  return call.end_ns > call.start_ns ? call.end_ns - call.start_ns : 0;
}

// Keys and values in one call each, over the SAX writer. Keys of the schema are literals of
// plain ASCII; every string value goes through append_json_string so that escaping and UTF-8
// repair are the same as the tree-built lines had.
class Emitter {
 public:
  Emitter(Writer& writer, std::string& scratch) : writer_(writer), scratch_(scratch) {}

  // The quotes are added here rather than by Writer::Key, which would scan the name for
  // characters to escape: schema keys have none.
  template <std::size_t N>
  void key(const char (&name)[N]) {
    std::array<char, N + 1> quoted;
    quoted.front() = '"';
    std::copy_n(name, N - 1, quoted.begin() + 1);
    quoted.back() = '"';
    writer_.RawValue(quoted.data(), quoted.size(), rapidjson::kStringType);
  }
  // A key that is data (a hook name, a histogram bound).
  void key_text(std::string_view name) { quoted(name); }

  void string(std::string_view text) { quoted(text); }
  void null() { writer_.Null(); }
  void boolean(bool value) { writer_.Bool(value); }
  void number(std::uint64_t value) { writer_.Uint64(value); }
  void number(std::uint32_t value) { writer_.Uint(value); }
  void number(std::uint16_t value) { writer_.Uint(value); }
  void number(std::uint8_t value) { writer_.Uint(value); }
  void number(std::int64_t value) { writer_.Int64(value); }
  void number(std::int32_t value) { writer_.Int(value); }
  // A share in [0, 1], to four decimals (enough for "0.0123": 1.23 %).
  void fraction(double value) {
    writer_.SetMaxDecimalPlaces(4);
    writer_.Double(value);
    writer_.SetMaxDecimalPlaces(Writer::kDefaultMaxDecimalPlaces);
  }
  template <typename T>
  void number(const std::optional<T>& value) {
    if (value)
      number(*value);
    else
      null();
  }

  // "7:0", or null for device 0.
  void dev(DevT dev) {
    if (!is_real_dev(dev)) return null();
    dev_always(dev);
  }
  void dev_always(DevT dev) {
    std::array<char, 24> text{};
    char* end = text.data();
    *end++ = '"';
    end = std::to_chars(end, text.data() + text.size(), dev_major(dev)).ptr;
    *end++ = ':';
    end = std::to_chars(end, text.data() + text.size(), dev_minor(dev)).ptr;
    *end++ = '"';
    writer_.RawValue(text.data(), static_cast<std::size_t>(end - text.data()),
                     rapidjson::kStringType);
  }

  // The kernel reports errors as negative errnos; 0 and up mean success.
  void error(std::int64_t negative_errno) {
    if (negative_errno >= 0) return null();
    string(errno_name(static_cast<int>(negative_errno)));
  }

  void start_object() { writer_.StartObject(); }
  void end_object() { writer_.EndObject(); }
  void start_array() { writer_.StartArray(); }
  void end_array() { writer_.EndArray(); }

 private:
  // Keys and values alike: to the writer both are strings.
  void quoted(std::string_view text) {
    scratch_.clear();
    scratch_ += '"';
    append_json_string(scratch_, text);
    scratch_ += '"';
    writer_.RawValue(scratch_.data(), scratch_.size(), rapidjson::kStringType);
  }

  Writer& writer_;
  std::string& scratch_;
};

// Who made the call, on which file: the first keys of every syscall object.
void call_identity(Emitter& e, const char* type, const SyscallEvent& call) {
  e.key("type");
  e.string(type);
  e.key("pid");
  e.number(call.pid);
  e.key("tid");
  e.number(call.tid);
  e.key("comm");
  e.string(call.comm);
  e.key("syscall");
  e.string(syscall_name(call.syscall));
  e.key("fd");
  if (call.fd < 0)
    e.null();
  else
    e.number(std::int32_t{call.fd});
  e.key("dev");
  e.dev(call.dev);
  e.key("ino");
  e.number(call.ino);
}

void call_times(Emitter& e, const SyscallEvent& call) {
  e.key("start_ns");
  e.number(call.start_ns);
  e.key("end_ns");
  e.number(call.end_ns);
  e.key("latency_ns");
  e.number(latency_ns(call));
}

void nvme_object(Emitter& e, const NvmeCommand& nvme) {
  e.start_object();
  e.key("qid");
  e.number(nvme.qid);
  e.key("cid");
  e.number(nvme.cid);
  e.key("opcode");
  e.number(nvme.opcode);
  e.key("nsid");
  e.number(nvme.nsid);
  e.key("fua");
  e.boolean(nvme.fua);
  e.key("submit_ns");
  e.number(nvme.submit_ns);
  e.key("complete_ns");
  e.number(nvme.complete_ns);
  e.key("status");
  e.number(nvme.status);
  e.end_object();
}

void request_object(Emitter& e, const RequestTimeline& request) {
  e.start_object();
  e.key("dev");
  e.dev_always(request.disk);
  e.key("sector");
  if (request.op == ReqOp::Flush)
    e.null();  // a cache flush has no sector (the kernel leaves it at -1)
  else
    e.number(request.sector);
  e.key("bytes");
  e.number(request.bytes);
  e.key("rwbs");
  e.string(rwbs(request.op, request.flags, request.bytes));
  e.key("fua");
  e.boolean((request.flags & req_flag::kFua) != 0);
  e.key("bios");
  e.number(request.bios);
  e.key("submitter");
  if (request.submit_tid) {
    e.start_object();
    e.key("tid");
    e.number(*request.submit_tid);
    e.key("comm");
    e.string(request.submit_comm);
    e.key("why");
    e.string(submit_why_name(request.submit_why));
    e.end_object();
  } else {
    e.null();
  }
  e.key("queue_ns");
  e.number(request.queue_ns);
  e.key("insert_ns");
  e.number(request.insert_ns);
  e.key("issue_ns");
  e.number(request.issue_ns);
  e.key("complete_ns");
  e.number(request.complete_ns);
  e.key("durable_ns");
  e.number(request.durable_ns);
  e.key("error");
  e.error(request.error);
  e.key("nvme");
  if (request.nvme)
    nvme_object(e, *request.nvme);
  else
    e.null();
  e.end_object();
}

void requests_array(Emitter& e, const std::vector<RequestTimeline>& requests) {
  e.start_array();
  for (const RequestTimeline& request : requests) request_object(e, request);
  e.end_array();
}

void commit_object(Emitter& e, const JournalCommit& commit) {
  e.start_object();
  e.key("dev");
  e.dev_always(commit.dev);
  e.key("transaction");
  e.number(commit.transaction);
  e.key("start_ns");
  e.number(commit.start_ns);
  e.key("locking_ns");
  e.number(commit.locking_ns);
  e.key("flushing_ns");
  e.number(commit.flushing_ns);
  e.key("logging_ns");
  e.number(commit.logging_ns);
  e.key("end_ns");
  e.number(commit.end_ns);
  e.end_object();
}

// Where a slow call's time went (null when causes were not asked for: --min-latency).
void causes_value(Emitter& e, const std::optional<SlowCauses>& causes) {
  if (!causes) return e.null();
  e.start_object();
  e.key("on_cpu_ns");
  e.number(causes->on_cpu_ns);
  e.key("throttled_ns");
  e.number(causes->throttle_ns);
  e.key("writeback_wait_ns");
  e.number(causes->writeback_wait_ns);
  e.key("blocked_ns");
  e.number(causes->blocked_ns);
  e.key("runnable_ns");
  e.number(causes->runnable_ns);
  e.end_object();
}

void write_object(Emitter& e, const WriteTimeline& write) {
  const SyscallEvent& call = write.call;
  e.start_object();
  call_identity(e, "write", call);
  e.key("offset");
  e.number(call.pos);
  e.key("bytes");
  e.number(call.ret > 0 ? static_cast<std::uint64_t>(call.ret) : std::uint64_t{0});
  e.key("requested");
  e.number(call.count);
  e.key("ret");
  e.number(call.ret);
  e.key("error");
  e.error(call.ret);
  e.key("direct");
  e.boolean(write.direct);
  e.key("sync");
  e.boolean(write.sync);
  e.key("append");
  e.boolean((call.file_flags & file_flag::kAppend) != 0);
  call_times(e, call);
  e.key("pages_dirtied");
  e.number(call.pages_dirtied);
  e.key("throttled_ns");
  e.number(call.throttle_ns);
  e.key("throttle_events");
  e.number(call.throttle_events);
  e.key("writeback_waits");
  e.number(call.writeback_waits);
  e.key("state");
  e.string(write_state_name(write.state));
  e.key("pages");
  e.number(write.pages);
  e.key("pages_pending");
  e.number(write.pages_pending);
  e.key("requests");
  requests_array(e, write.requests);
  e.key("written_ns");
  e.number(write.written_ns);
  e.key("durable_ns");
  e.number(write.durable_ns);
  e.key("durable_via");
  if (write.durable_via == DurableVia::None)
    e.null();
  else
    e.string(durable_via_name(write.durable_via));
  e.key("incomplete");
  e.boolean(write.incomplete);
  e.key("causes");
  causes_value(e, write.causes);
  e.key("throttle_pauses");
  e.start_array();
  for (const ThrottlePause& pause : write.throttles) {
    e.start_object();
    e.key("ts");
    e.number(pause.ts);
    e.key("pause_ms");
    e.number(pause.pause_ms);
    e.key("dirty_pages");
    e.number(pause.dirty_pages);
    e.key("limit_pages");
    e.number(pause.limit_pages);
    e.end_object();
  }
  e.end_array();
  e.end_object();
}

void sync_object(Emitter& e, const SyncTimeline& sync) {
  const SyscallEvent& call = sync.call;
  e.start_object();
  call_identity(e, "fsync", call);
  call_times(e, call);
  e.key("ret");
  e.number(call.ret);
  e.key("error");
  e.error(call.ret);
  e.key("phases");
  e.start_object();
  e.key("writeback_ns");
  e.number(sync.phases.writeback_ns);
  e.key("data_io_ns");
  e.number(sync.phases.data_io_ns);
  e.key("journal_ns");
  e.number(sync.phases.journal_ns);
  e.key("flush_ns");
  e.number(sync.phases.flush_ns);
  e.key("other_ns");
  e.number(sync.phases.other_ns);
  e.end_object();
  // Where each phase fell in time: the phases above are their totals.
  e.key("segments");
  e.start_array();
  for (const PhaseSegment& segment : sync.segments) {
    e.start_object();
    e.key("phase");
    e.string(sync_phase_name(segment.phase));
    e.key("start_ns");
    e.number(segment.start_ns);
    e.key("end_ns");
    e.number(segment.end_ns);
    e.end_object();
  }
  e.end_array();
  e.key("requests");
  requests_array(e, sync.requests);
  e.key("flushes");
  requests_array(e, sync.flushes);
  e.key("journal_commits");
  e.start_array();
  for (const JournalCommit& commit : sync.commits) commit_object(e, commit);
  e.end_array();
  e.key("incomplete");
  e.boolean(sync.incomplete);
  e.key("causes");
  causes_value(e, sync.causes);
  e.end_object();
}

void phases_object(Emitter& e, const SyncPhaseSummary& phases) {
  e.start_object();
  for (std::size_t i = 0; i < SyncPhaseSummary::kPhases.size(); ++i) {
    const PhaseStats s = phases.phase(i);
    e.key_text(std::string(SyncPhaseSummary::kPhases[i]) + "_ns");
    e.start_object();
    e.key("p50");
    e.number(s.p50);
    e.key("p99");
    e.number(s.p99);
    e.key("max");
    e.number(s.max);
    e.key("total");
    e.number(s.total);
    // log2 buckets as {"lower bound ns": count}, non-empty ones only.
    e.key("log2_histogram");
    e.start_object();
    for (std::size_t b = 0; b < s.histogram.buckets.size(); ++b) {
      if (!s.histogram.buckets[b]) continue;
      e.key_text(std::to_string(b == 0 ? 0 : Nanos{1} << b));
      e.number(s.histogram.buckets[b]);
    }
    e.end_object();
    e.end_object();
  }
  e.end_object();
}

void direct_io_array(Emitter& e, const DirectIoSummary& direct) {
  e.start_array();
  for (const DirectIoVerdict& v : direct.verdicts()) {
    e.start_object();
    e.key("pid");
    e.number(v.pid);
    e.key("comm");
    e.string(v.comm);
    e.key("dev");
    e.dev_always(v.dev);
    e.key("ino");
    e.number(v.ino);
    e.key("writes");
    e.number(v.writes);
    e.key("bytes");
    e.number(v.bytes);
    e.key("pages_dirtied");
    e.number(v.pages_dirtied);
    e.key("buffered_bytes");
    e.number(v.buffered_bytes);
    e.key("einval");
    e.number(v.einval);
    e.key("other_errors");
    e.number(v.other_errors);
    e.key("bypassed_page_cache");
    e.boolean(v.bypassed());
    e.end_object();
  }
  e.end_array();
}

void summary_object(Emitter& e, const TraceSummary& totals) {
  e.start_object();
  e.key("type");
  e.string("summary");
  e.key("events");
  e.number(totals.events);
  e.key("lost");
  e.number(totals.lost);
  e.key("lost_by_hook");
  e.start_object();
  for (const auto& [hook, lost] : totals.lost_by_hook) {
    e.key_text(hook);
    e.number(lost);
  }
  e.end_object();
  e.key("writes");
  e.number(totals.writes);
  e.key("fsyncs");
  e.number(totals.fsyncs);
  e.key("incomplete");
  e.number(totals.incomplete);
  e.key("aged_out");
  e.number(totals.aged_out);
  e.key("evicted");
  e.number(totals.evicted);
  e.key("lost_share");
  e.fraction(totals.lost_share);
  e.key("lost_advice");
  if (totals.lost_advice.empty())
    e.null();
  else
    e.string(totals.lost_advice);
  e.key("duration_ns");
  e.number(totals.duration_ns);
  e.key("fsync_phases");
  if (totals.sync_phases.syncs())
    phases_object(e, totals.sync_phases);
  else
    e.null();
  e.key("direct_io");
  direct_io_array(e, totals.direct_io);
  e.end_object();
}

}  // namespace

struct JsonLineFormatter::State {
  Buffer buffer;
  Writer writer{buffer};
  std::string scratch;  // one escaped string at a time

  // Runs `fill` on a fresh line and returns its text.
  template <typename Fill>
  std::string_view format(Fill&& fill) {
    buffer.Clear();
    writer.Reset(buffer);
    Emitter emitter(writer, scratch);
    fill(emitter);
    return {buffer.GetString(), buffer.GetSize()};
  }
};

JsonLineFormatter::JsonLineFormatter() : state_(std::make_unique<State>()) {}
JsonLineFormatter::~JsonLineFormatter() = default;

std::string_view JsonLineFormatter::write(const WriteTimeline& write) {
  return state_->format([&write](Emitter& e) { write_object(e, write); });
}

std::string_view JsonLineFormatter::sync(const SyncTimeline& sync) {
  return state_->format([&sync](Emitter& e) { sync_object(e, sync); });
}

std::string_view JsonLineFormatter::timeline(const Timeline& item) {
  return std::visit(
      [this](const auto& timeline) -> std::string_view {
        using T = std::decay_t<decltype(timeline)>;
        if constexpr (std::is_same_v<T, WriteTimeline>) {
          return write(timeline);
        } else {
          return sync(timeline);
        }
      },
      item);
}

std::string_view JsonLineFormatter::summary(const TraceSummary& totals) {
  return state_->format([&totals](Emitter& e) { summary_object(e, totals); });
}

nlohmann::ordered_json write_json(const WriteTimeline& write) {
  return nlohmann::ordered_json::parse(JsonLineFormatter().write(write));
}

nlohmann::ordered_json sync_json(const SyncTimeline& sync) {
  return nlohmann::ordered_json::parse(JsonLineFormatter().sync(sync));
}

nlohmann::ordered_json timeline_json(const Timeline& item) {
  return nlohmann::ordered_json::parse(JsonLineFormatter().timeline(item));
}

nlohmann::ordered_json summary_json(const TraceSummary& totals) {
  return nlohmann::ordered_json::parse(JsonLineFormatter().summary(totals));
}

std::string json_line(const nlohmann::ordered_json& object) {
  return object.dump(-1, ' ', /*ensure_ascii=*/false,
                     nlohmann::ordered_json::error_handler_t::replace);
}

void JsonSink::timeline(const Timeline& item) {
  emit(formatter_.timeline(item));
}

void JsonSink::summary(const TraceSummary& totals) {
  emit(formatter_.summary(totals));
}

void JsonSink::flush() {
  out_.flush();
}

void JsonSink::emit(std::string_view line) {
  out_.write(line.data(), static_cast<std::streamsize>(line.size()));
  out_.put('\n');
  out_.flush();
}

}  // namespace wp
