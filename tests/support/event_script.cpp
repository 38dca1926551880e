// SPDX-License-Identifier: Apache-2.0
#include "event_script.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "decode/syscalls.h"
#include "script_records.h"

namespace wp {
namespace {

using namespace script;

// The line's words: spaces separate them, double quotes keep spaces inside a value
// (path="/mnt/my file"), and an unquoted # starts a comment.
std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false, in_word = false;
  for (const char c : line) {
    if (quoted) {
      if (c == '"')
        quoted = false;
      else
        word += c;
      continue;
    }
    if (c == '#') break;
    if (c == ' ' || c == '\t' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '"')
      quoted = true;
    else
      word += c;
  }
  if (quoted) throw ScriptError("unterminated quote");
  if (in_word) words.push_back(std::move(word));
  return words;
}

// The table parse_bits() takes for a flag set the outputs name with `names_of` (call_flag_names,
// name_change_flag_names): a script writes flags as the outputs print them.
template <typename NamesOf>
std::vector<std::pair<std::uint32_t, std::string_view>> bit_names(NamesOf names_of) {
  std::vector<std::pair<std::uint32_t, std::string_view>> table;
  for (std::uint32_t bit = 1; bit; bit <<= 1)
    for (const char* name : names_of(bit)) table.emplace_back(bit, name);
  return table;
}

constexpr std::pair<std::uint32_t, std::string_view> kVia[] = {
    {WP_VIA_IO_URING, "inline"},
    {WP_VIA_IO_URING | WP_VIA_IO_WQ, "io-wq"},
    {WP_VIA_IO_URING | WP_VIA_SQPOLL, "sqpoll"},
    {WP_VIA_IO_URING | WP_VIA_SQPOLL | WP_VIA_IO_WQ, "sqpoll+io-wq"}};

constexpr std::pair<std::uint32_t, std::string_view> kSleepFlags[] = {
    {static_cast<std::uint32_t>(SleepFlag::None), "none"},
    {static_cast<std::uint32_t>(SleepFlag::DirtyThrottle), "throttle"},
    {static_cast<std::uint32_t>(SleepFlag::WritebackWait), "writeback"}};

// The key=value fields of one line. Each is taken once by the kind's reader; any left over
// is a key the kind does not have, which done() reports (a typo never passes silently).
class Fields {
 public:
  Fields(std::span<const std::string> words, Names& names) : names_(names) {
    for (const std::string& word : words) {
      const auto eq = word.find('=');
      std::string key = word.substr(0, eq);
      std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
      if (!values_.emplace(key, std::move(value)).second)
        throw ScriptError(fmt::format("'{}' given twice", key));
    }
  }

  std::optional<std::string> take(const std::string& key) {
    const auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    std::string value = std::move(it->second);
    values_.erase(it);
    return value;
  }
  std::string required(const std::string& key) {
    auto value = take(key);
    if (!value) throw ScriptError(fmt::format("{}= is required here", key));
    return *value;
  }
  bool flag(const std::string& key) {
    auto value = take(key);
    if (value && !value->empty())
      throw ScriptError(fmt::format("{} is a flag: write it without a value", key));
    return value.has_value();
  }
  std::string text(const std::string& key, std::string fallback = {}) {
    return take(key).value_or(std::move(fallback));
  }
  template <typename T = std::uint64_t>
  T number(const std::string& key, T fallback = 0) {
    const auto value = take(key);
    return value ? static_cast<T>(parse_number(*value, key)) : fallback;
  }
  // A count that may be negative (a return value): a number, or -ENAME.
  std::int64_t signed_number(const std::string& key, std::int64_t fallback) {
    const auto value = take(key);
    return value ? parse_signed(*value, key) : fallback;
  }
  Nanos duration(const std::string& key, Nanos fallback = 0) {
    const auto value = take(key);
    return value ? parse_duration(*value, key) : fallback;
  }
  DevT device(const std::string& key, DevT fallback = 0) {
    const auto value = take(key);
    return value ? names_.device(*value) : fallback;
  }
  DevT required_device(const std::string& key) { return names_.device(required(key)); }
  std::uint64_t pointer(const std::string& key) { return names_.pointer(required(key)); }
  std::uint32_t bits(const std::string& key, NameTable table, std::uint32_t fallback = 0) {
    const auto value = take(key);
    return value ? parse_bits(*value, table, key) : fallback;
  }
  template <typename E>
  E choice(const std::string& key, NameTable table, E fallback) {
    const auto value = take(key);
    return value ? static_cast<E>(parse_choice(*value, table, key)) : fallback;
  }
  Names& names() { return names_; }

  void done(std::string_view kind) const {
    if (values_.empty()) return;
    throw ScriptError(fmt::format("{} has no field '{}'", kind, values_.begin()->first));
  }

 private:
  Names& names_;
  std::map<std::string, std::string> values_;
};

// The thread fields every event of a thread has: tid, pid (the tid unless given), comm.
template <typename E>
void take_thread(Fields& f, E& ev, const char* default_comm) {
  ev.tid = f.number<std::uint32_t>("tid", 0);
  ev.pid = f.number<std::uint32_t>("pid", ev.tid);
  ev.comm = f.text("comm", default_comm);
}

std::optional<Syscall> call_named(std::string_view name, bool name_change_only) {
  const std::size_t count = kSyscallSlots.size() + kUringOps.size() + kNameChangeCalls.size();
  for (std::size_t i = 0; i < count; ++i) {
    const auto call = static_cast<Syscall>(i);
    if (name_change_only && !is_name_change_call(call)) continue;
    if (syscall_name(call) == name) return call;
  }
  return std::nullopt;
}

NameChangeOp name_change_op_of(Syscall call) {
  switch (call) {
#define WP_SCRIPT_NS_OP_(name, Name, value, op, d1, n1, d2, n2, flags, fd) \
  case Syscall::Name: return NameChangeOp(WP_NS_##op);
    WP_NAME_CHANGE_TABLE(WP_SCRIPT_NS_OP_)
#undef WP_SCRIPT_NS_OP_
    default: break;
  }
  return NameChangeOp::Rename;
}

// "vda1/2": the directory (device, inode) a name is relative to.
std::pair<DevT, std::uint64_t> directory(Fields& f, const std::string& key) {
  const auto value = f.take(key);
  if (!value) return {0, 0};
  const auto slash = value->rfind('/');
  if (slash == std::string::npos)
    throw ScriptError(fmt::format("{}: write the directory as DEVICE/INODE", key));
  return {f.names().device(value->substr(0, slash)), parse_number(value->substr(slash + 1), key)};
}

// A call's record arrives when it returns: the line's time is its end, dur= its latency.
std::pair<Nanos, Nanos> call_times(Fields& f, Nanos at) {
  const Nanos latency = f.duration("dur");
  if (latency > at) throw ScriptError("dur= reaches before time 0 (the line's time is the return)");
  return {at - latency, at};
}

SyscallEvent read_call(Fields& f, Syscall call, Nanos at) {
  SyscallEvent ev;
  ev.syscall = call;
  std::tie(ev.start_ns, ev.end_ns) = call_times(f, at);
  take_thread(f, ev, "app");
  ev.fd = static_cast<int>(f.signed_number("fd", 3));  // -1: none (msync)
  ev.dev = f.device("dev");
  ev.fs_dev = f.device("fs_dev");
  ev.ino = f.number("ino");
  ev.file_flags = f.bits("file", names_of_file_flags(), file_flag::kRegular);
  ev.call_flags = f.bits("flags", bit_names(call_flag_names));
  if (is_uring_op(call)) {
    ev.via = static_cast<std::uint8_t>(parse_bits(f.text("via", "inline"), kVia, "via"));
  }
  const bool write = is_write_syscall(call);
  ev.ret = write ? f.signed_number("ret", std::numeric_limits<std::int64_t>::min())
                 : f.signed_number("ret", 0);
  if (ev.ret == std::numeric_limits<std::int64_t>::min())
    throw ScriptError("ret= is required for a write (bytes written, or -ENAME)");
  ev.pos = f.number("pos");
  ev.count = f.number("count", ev.ret > 0 ? static_cast<std::uint64_t>(ev.ret) : 0);
  ev.pages_dirtied = f.number<std::uint32_t>("dirtied");
  ev.dirty_folios = f.number<std::uint32_t>("folios", ev.pages_dirtied);
  ev.throttle_ns = f.duration("throttle");
  ev.throttle_events = f.number<std::uint32_t>("throttle_events");
  ev.writeback_waits = f.number<std::uint32_t>("wb_waits");
  return ev;
}

// A read's line: the call as a write's (ret= the bytes read), and what the page cache did:
// added= pages it put in the cache, beyond= those past its last byte, sync_ra= / async_ra=
// the readaheads it ran, sync_ra_pages= / async_ra_pages= the pages it still wanted then.
ReadEvent read_read(Fields& f, Syscall call, Nanos at) {
  ReadEvent ev;
  SyscallEvent& c = ev.call;
  c.syscall = call;
  std::tie(c.start_ns, c.end_ns) = call_times(f, at);
  take_thread(f, c, "app");
  c.fd = static_cast<int>(f.signed_number("fd", 3));
  c.dev = f.device("dev");
  c.fs_dev = f.device("fs_dev");
  c.ino = f.number("ino");
  c.file_flags = f.bits("file", names_of_file_flags(), file_flag::kRegular);
  c.ret = f.signed_number("ret", std::numeric_limits<std::int64_t>::min());
  if (c.ret == std::numeric_limits<std::int64_t>::min())
    throw ScriptError("ret= is required for a read (bytes read, or -ENAME)");
  c.pos = f.number("pos");
  c.count = f.number("count", c.ret > 0 ? static_cast<std::uint64_t>(c.ret) : 0);
  ev.pages_added = f.number<std::uint32_t>("added");
  ev.pages_added_beyond = f.number<std::uint32_t>("beyond");
  if (ev.pages_added_beyond > ev.pages_added)
    throw ScriptError("beyond= counts pages of added=: it cannot be more");
  ev.sync_ra = f.number<std::uint16_t>("sync_ra");
  ev.async_ra = f.number<std::uint16_t>("async_ra");
  ev.sync_ra_pages = f.number<std::uint32_t>("sync_ra_pages");
  ev.async_ra_pages = f.number<std::uint32_t>("async_ra_pages");
  return ev;
}

NameChangeEvent read_name_change(Fields& f, Syscall call, Nanos at) {
  NameChangeEvent ev;
  ev.syscall = call;
  ev.op = name_change_op_of(call);
  std::tie(ev.start_ns, ev.end_ns) = call_times(f, at);
  take_thread(f, ev, "app");
  ev.flags = f.bits("flags", bit_names(name_change_flag_names));
  ev.ret = f.signed_number("ret", 0);
  ev.fd = static_cast<int>(f.signed_number("fd", -1));
  if (auto name = f.take("name")) ev.names[0] = std::move(*name);
  if (auto old_name = f.take("old")) ev.names[0] = std::move(*old_name);
  if (auto new_name = f.take("new")) ev.names[1] = std::move(*new_name);
  std::tie(ev.dir_dev[0], ev.dir_ino[0]) = directory(f, "dir");
  std::tie(ev.dir_dev[1], ev.dir_ino[1]) = directory(f, "new_dir");
  ev.dev = f.device("dev");
  ev.ino = f.number("ino");
  return ev;
}

BioEvent read_bio(Fields& f, BioKind kind, Nanos at, const std::vector<DeviceInfo>& devices) {
  BioEvent ev;
  ev.kind = kind;
  ev.ts = at;
  ev.bio = f.pointer("bio");
  take_thread(f, ev, "kworker/u4:1");
  ev.bdev = f.required_device("dev");
  ev.disk = ev.bdev;
  for (const DeviceInfo& device : devices)
    if (device.dev == ev.bdev) ev.disk = device.disk;
  ev.disk = f.device("disk", ev.disk);
  ev.sector = f.number("sector");
  ev.bytes = f.number<std::uint32_t>("bytes");
  ev.op = f.choice("op", names_of_ops(), ReqOp::Write);
  ev.flags = f.bits("flags", names_of_request_flags());
  ev.why = static_cast<SubmitWhy>(0);
  if (const auto why = f.take("why")) {
    bool known = false;
    for (std::uint8_t value = 0; value < 16 && !known; ++value)
      if (submit_why_name(static_cast<SubmitWhy>(value)) == *why) {
        ev.why = static_cast<SubmitWhy>(value);
        known = true;
      }
    if (!known) throw ScriptError(fmt::format("why: unknown '{}'", *why));
  }
  if (f.flag("anon")) ev.bio_flags |= bio_flag::kAnon;
  if (f.flag("nofile")) ev.bio_flags |= bio_flag::kNoFile;
  if (f.flag("mixed")) ev.bio_flags |= bio_flag::kMixed;
  if (f.flag("truncated")) ev.bio_flags |= bio_flag::kTruncated;
  // A kernel thread's bio: said with `kthread`, and implied by a flusher's reason or a
  // kernel thread's name (kworker/…, jbd2/…), as the kernel would have flagged it.
  const bool flusher = ev.why == SubmitWhy::Background || ev.why == SubmitWhy::Periodic ||
                       ev.why == SubmitWhy::Sync || ev.why == SubmitWhy::Vmscan ||
                       ev.why == SubmitWhy::OtherWriteback;
  if (f.flag("kthread") || flusher || ev.comm.starts_with("kworker/") ||
      ev.comm.starts_with("jbd2/"))
    ev.bio_flags |= bio_flag::kKernelThread;
  ev.ino = f.number("ino");
  ev.file_dev = f.device("file_dev", ev.ino ? ev.bdev : 0);
  ev.uring_tag = f.number<std::uint32_t>("uring_tag");
  // ext=INDEX+PAGES[,INDEX+PAGES…]: the file's pages the bio carries.
  if (const auto extents = f.take("ext")) {
    std::string_view text = *extents;
    while (!text.empty()) {
      if (ev.nr_extents == kMaxBioExtents)
        throw ScriptError(fmt::format("ext: at most {} extents", kMaxBioExtents));
      const auto comma = text.find(',');
      const std::string_view extent = text.substr(0, comma);
      const auto plus = extent.find('+');
      if (plus == std::string_view::npos) throw ScriptError("ext: write INDEX+PAGES");
      ev.extents[ev.nr_extents++] =
          Extent{parse_number(extent.substr(0, plus), "ext"),
                 static_cast<std::uint32_t>(parse_number(extent.substr(plus + 1), "ext"))};
      text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    }
  } else if (!(ev.bio_flags & (bio_flag::kAnon | bio_flag::kNoFile)) && ev.op == ReqOp::Write &&
             ev.bytes) {
    throw ScriptError("a write bio of file pages needs ext=INDEX+PAGES (or anon, or nofile)");
  }
  return ev;
}

// stack="innermost;…;outermost": addresses standing for the frames, each new frame's name
// added to `symbols`.
KernelStack read_stack(Fields& f, const std::string& key, std::vector<ScriptStep>& symbols) {
  KernelStack stack;
  const auto text = f.take(key);
  if (!text) return stack;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const auto semicolon = rest.find(';');
    const std::string frame(rest.substr(0, semicolon));
    bool fresh = false;
    stack.addrs.push_back(f.names().symbol(frame, fresh));
    if (fresh) symbols.emplace_back(ScriptSymbol{stack.addrs.back(), frame});
    rest = semicolon == std::string_view::npos ? std::string_view() : rest.substr(semicolon + 1);
  }
  return stack;
}

// A `sleep` line: one stack of the offcpu event before it, and who woke it.
OffCpuSleep read_sleep(Fields& f, std::vector<ScriptStep>& symbols) {
  OffCpuSleep sleep;
  sleep.ns = f.duration("ns");
  sleep.longest_ns = f.duration("longest", sleep.ns);
  sleep.sleeps = f.number<std::uint32_t>("count", 1);
  sleep.flag = f.choice("flag", NameTable(kSleepFlags), SleepFlag::None);
  sleep.stack = read_stack(f, "stack", symbols);
  if (const auto waker_tid = f.take("waker_tid")) {
    Waker waker;
    waker.tid = static_cast<std::uint32_t>(parse_number(*waker_tid, "waker_tid"));
    waker.pid = f.number<std::uint32_t>("waker_pid", waker.tid);
    waker.comm = f.text("waker_comm");
    waker.kernel_thread = f.flag("waker_kthread");
    // No context key: the stitcher reads the wake's context from the waker's stack.
    waker.stack = read_stack(f, "waker_stack", symbols);
    sleep.waker = std::move(waker);
  }
  return sleep;
}

OffCpuEvent read_offcpu(Fields& f, Nanos at) {
  OffCpuEvent ev;
  ev.ts = at;
  ev.start_ns = f.duration("start", at);
  ev.tid = f.number<std::uint32_t>("tid");
  ev.unslotted_ns = f.duration("unslotted");
  ev.inode_lock_ns = f.duration("inode_lock");
  ev.inode_lock_waits = f.number<std::uint32_t>("inode_lock_waits", ev.inode_lock_ns ? 1 : 0);
  if (const auto holder = f.take("holder_tid")) {
    LockHolder h;
    h.tid = static_cast<std::uint32_t>(parse_number(*holder, "holder_tid"));
    h.pid = f.number<std::uint32_t>("holder_pid", h.tid);
    h.comm = f.text("holder_comm");
    ev.inode_lock_holder = std::move(h);
  }
  ev.direct_reclaim_ns = f.duration("direct_reclaim");
  ev.memcg_reclaim_ns = f.duration("memcg_reclaim");
  ev.compaction_ns = f.duration("compaction");
  ev.blk_throttled = f.number<std::uint32_t>("blk_throttled");
  return ev;
}

// The event of a line whose kind a record table's event has (script_records.h), if it is one.
template <typename... E>
std::optional<Event> read_table_event(std::tuple<E...>*, const std::string& kind, Fields& f,
                                      Nanos at) {
  std::optional<Event> event;
  const auto take = [&](const std::string& key) { return f.take(key); };
  ((!event && is_word_of<E>(kind) ? (void)(event = read_table_line<E>(kind, take, at, f.names()))
                                  : void()),
   ...);
  return event;
}

// One event line's kind and fields: the event (or loss) it stands for.
ScriptStep read_event(const std::string& kind, Fields& f, Nanos at,
                      const std::vector<DeviceInfo>& devices) {
  if (kind == "bio") return read_bio(f, BioKind::Queue, at, devices);
  if (kind == "split") return read_bio(f, BioKind::Split, at, devices);
  if (auto event = read_table_event(static_cast<TableEvents*>(nullptr), kind, f, at))
    return std::move(*event);
  if (kind == "lost") {
    ScriptLoss loss;
    const std::string hook = f.required("hook");
    std::size_t index = 0;
    while (index < loss.counts.size() && hook != hook_counter_name(index)) ++index;
    if (index == loss.counts.size()) throw ScriptError(fmt::format("hook: unknown '{}'", hook));
    loss.counts[index] = f.number("count", 1);
    return loss;
  }
  if (kind == "offcpu") return read_offcpu(f, at);
  if (kind == "path") {
    FilePathEvent ev;
    ev.ts = at;
    ev.dev = f.required_device("dev");
    ev.ino = f.number("ino");
    ev.path = f.required("path");
    ev.ns_path = f.text("ns_path");
    ev.mnt_ns = f.number<std::uint32_t>("mnt_ns");
    ev.deleted = f.flag("deleted");
    ev.truncated = f.flag("truncated");
    return ev;
  }
  const bool name_change_only = kind.starts_with("ns.");
  const std::string call_name = name_change_only ? kind.substr(3) : kind;
  if (const auto call = call_named(call_name, name_change_only)) {
    if (is_name_change_call(*call)) return read_name_change(f, *call, at);
    if (is_read_syscall(*call)) return read_read(f, *call, at);
    return read_call(f, *call, at);
  }
  throw ScriptError(fmt::format("unknown event kind '{}'", kind));
}

// The lines before the first event: device, fs, page_shift, min_latency.
bool read_directive(const std::vector<std::string>& words, EventScript& script, Names& names) {
  const std::string& what = words[0];
  if (what == "device") {
    if (words.size() < 3) throw ScriptError("write: device NAME MAJ:MIN [disk=NAME] [cache=none]");
    Fields f(std::span<const std::string>(words).subspan(3), names);
    DeviceInfo device;
    device.name = words[1];
    device.dev = names.device(words[2]);
    names.add_device(device.name, device.dev);
    device.disk = f.device("disk", device.dev);
    const std::string cache = f.text("cache", "volatile");
    if (cache != "volatile" && cache != "none")
      throw ScriptError("cache: 'volatile' (a write-back cache) or 'none'");
    device.volatile_write_cache = cache == "volatile";
    device.fua = f.flag("fua");
    f.done("device");
    script.devices.push_back(std::move(device));
    return true;
  }
  if (what == "fs") {
    if (words.size() < 2) throw ScriptError("write: fs DEVICE type=TYPE [disks=A,B] [aliases=C]");
    Fields f(std::span<const std::string>(words).subspan(2), names);
    FileSystemInfo fs;
    fs.dev = names.device(words[1]);
    fs.type = f.required("type");
    for (const char* key : {"disks", "aliases"}) {
      std::string_view list;
      const auto value = f.take(key);
      if (value) list = *value;
      while (!list.empty()) {
        const auto comma = list.find(',');
        (key == std::string_view("disks") ? fs.disks : fs.aliases)
            .push_back(names.device(list.substr(0, comma)));
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      }
    }
    f.done("fs");
    script.file_systems.push_back(std::move(fs));
    return true;
  }
  if (what == "page_shift" && words.size() == 2) {
    script.page_shift = static_cast<unsigned>(parse_number(words[1], "page_shift"));
    if (script.page_shift < 12 || script.page_shift > 16)
      throw ScriptError("page_shift: 12 (4 KiB) to 16 (64 KiB)");
    return true;
  }
  if (what == "min_latency" && words.size() == 2) {
    script.min_latency_ns = parse_duration(words[1], "min_latency");
    return true;
  }
  return false;
}

}  // namespace

ParsedScript parse_event_script(std::istream& in) {
  EventScript script;
  Names names;
  Nanos previous = 0;
  std::string line;
  std::size_t number = 0;
  bool after_offcpu = false;  // the last event line was an offcpu, which `sleep` lines add to
  try {
    while (std::getline(in, line)) {
      ++number;
      const std::vector<std::string> words = split_words(line);
      if (words.empty()) continue;
      if (words[0] == "sleep") {
        if (!after_offcpu) throw ScriptError("a sleep line follows an offcpu line");
        Fields f(std::span<const std::string>(words).subspan(1), names);
        std::vector<ScriptStep> symbols;
        OffCpuSleep sleep = read_sleep(f, symbols);
        f.done("sleep");
        // The offcpu event is the last step; the names of its new frames go before it, as a
        // trace file's come before the record holding them.
        std::get<OffCpuEvent>(std::get<Event>(script.steps.back()))
            .sleeps.push_back(std::move(sleep));
        script.steps.insert(script.steps.end() - 1, std::make_move_iterator(symbols.begin()),
                            std::make_move_iterator(symbols.end()));
        continue;
      }
      after_offcpu = false;
      const char first = words[0][0];
      if (first != '+' && (first < '0' || first > '9')) {
        if (!read_directive(words, script, names))
          throw ScriptError(
              fmt::format("'{}' is neither a directive (device, fs, page_shift, "
                          "min_latency) nor a time",
                          words[0]));
        continue;
      }
      if (words.size() < 2) throw ScriptError("an event line is TIME KIND [key=value...]");
      const bool relative = first == '+';
      const Nanos at = relative ? previous + parse_duration(words[0].substr(1), "time")
                                : parse_duration(words[0], "time");
      previous = at;
      Fields f(std::span<const std::string>(words).subspan(2), names);
      ScriptStep step = read_event(words[1], f, at, script.devices);
      f.done(words[1]);
      script.steps.push_back(std::move(step));
      if (const auto* event = std::get_if<Event>(&script.steps.back()))
        after_offcpu = std::holds_alternative<OffCpuEvent>(*event);
    }
  } catch (const ScriptError& e) {
    return {std::nullopt, fmt::format("{}: {}", number, e.what())};
  }
  return {std::move(script), {}};
}

namespace {
template <typename E, typename... Table>
constexpr bool kMadeFromATable = (std::is_same_v<E, Table> || ...);
template <typename E, typename... Table>
constexpr bool made_from_a_table(std::tuple<Table...>*) {
  return kMadeFromATable<E, Table...>;
}
}  // namespace

std::optional<std::string> write_event_line(const Event& event, const script::Names& names) {
  return std::visit(
      [&](const auto& ev) -> std::optional<std::string> {
        using E = std::remove_cvref_t<decltype(ev)>;
        if constexpr (made_from_a_table<E>(static_cast<TableEvents*>(nullptr)))
          return fmt::format("{} {}", format_duration(ev.ts), write_table_line(ev, names));
        else
          return std::nullopt;
      },
      event);
}

}  // namespace wp
