// SPDX-License-Identifier: Apache-2.0
// The verdict oracle: holds a trace's items of one file against truths the tracer did not
// compute — the workload's own log of its calls and their return codes (oracle_writer.c), the
// kernel's page-cache state of every page as the workload ended (cachestat(2)), the contract
// of a successful sync, and the disk's /proc/diskstats. Each check returns the violations it
// found, one readable line each; a round passes with none.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace wp::testing::oracle {

using nlohmann::json;

// What the workload logged (oracle_writer.c's format).
struct Call {
  std::string kind;  // "write", "store" or a sync's name
  std::int64_t offset = 0;
  std::int64_t bytes = 0;
  std::int64_t ret = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};
struct PageState {
  std::uint64_t cached = 0, dirty = 0, writeback = 0;
};
struct Truth {
  std::optional<DiskCounters> disk_start, disk_end;  // as the workload began and ended
  std::vector<Call> writes;                          // write calls, in order
  std::vector<Call> stores;                          // stores into the mapping
  std::vector<Call> syncs;
  std::optional<std::pair<std::int64_t, std::int64_t>> pages_window;  // cachestat's T0, T1
  std::vector<PageState> pages;
};

// The log's text (as the workload wrote it, or as a VM guest printed it).
inline Truth read_truth_text(const std::string& text) {
  Truth t;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string tag;
    f >> tag;
    Call c;
    if (tag == "write") {
      c.kind = tag;
      f >> c.offset >> c.bytes >> c.ret >> c.start_ns >> c.end_ns;
      t.writes.push_back(c);
    } else if (tag == "store") {
      c.kind = tag;
      f >> c.offset >> c.bytes >> c.start_ns >> c.end_ns;  // first page, pages
      t.stores.push_back(c);
    } else if (tag == "sync") {
      f >> c.kind >> c.ret >> c.start_ns >> c.end_ns;
      t.syncs.push_back(c);
    } else if (tag == "pages") {
      std::int64_t a = 0, b = 0;
      f >> a >> b;
      t.pages_window = {a, b};
    } else if (tag == "disk") {
      std::string when;
      DiskCounters d;
      f >> when >> d.writes >> d.write_sectors >> d.flushes;
      (when == "start" ? t.disk_start : t.disk_end) = d;
    } else if (tag == "page") {
      std::size_t index = 0;
      PageState p;
      f >> index >> p.cached >> p.dirty >> p.writeback;
      if (t.pages.size() <= index) t.pages.resize(index + 1);
      t.pages[index] = p;
    }
  }
  return t;
}

inline Truth read_truth(const std::string& path) {
  return read_truth_text(slurp(path));
}

inline std::int64_t i64(const json& v) {
  return v.is_null() ? -1 : v.get<std::int64_t>();
}

inline bool has_flag(const json& item, const char* flag) {
  if (!item.contains("call_flags") || !item["call_flags"].is_array()) return false;
  for (const json& f : item["call_flags"])
    if (f == flag) return true;
  return false;
}

// A write item that stands for a write call of the application: not the pages a process
// stored into a mapping (syscall "mmap"), not an open's copy-up of an overlay file (COPY_UP).
inline bool is_write_call(const json& w) {
  return w.value("syscall", "") != "mmap" && !has_flag(w, "COPY_UP");
}

// The trace's items of one file (by path), writes and syncs apart, each in start order.
struct FileItems {
  std::vector<json> writes;
  std::vector<json> syncs;
};

inline FileItems items_of(const std::vector<json>& items, const std::string& path) {
  FileItems f;
  for (const json& o : items) {
    if (!o.contains("path") || !o["path"].is_string() || o["path"] != path) continue;
    if (o["type"] == "write") f.writes.push_back(o);
    if (o["type"] == "fsync") f.syncs.push_back(o);
  }
  auto by_start = [](const json& a, const json& b) {
    return i64(a["start_ns"]) < i64(b["start_ns"]);
  };
  std::sort(f.writes.begin(), f.writes.end(), by_start);
  std::sort(f.syncs.begin(), f.syncs.end(), by_start);
  return f;
}

inline std::string brief(const json& w) {
  std::ostringstream s;
  s << w.value("syscall", "?") << " id " << w.value("id", 0) << " off " << w.value("offset", -1)
    << " " << w.value("bytes", -1) << " B state " << w.value("state", "?") << " pages "
    << w.value("pages", -1) << " pending " << w.value("pages_pending", -1);
  return s.str();
}

// The calls: one write item per write call with its offset and return value, one sync item
// per sync call with its return value, in the same order (the workload's own log).
inline std::vector<std::string> check_calls(const Truth& t, const FileItems& f) {
  std::vector<std::string> v;
  std::vector<json> calls;
  for (const json& w : f.writes)
    if (is_write_call(w)) calls.push_back(w);
  if (calls.size() != t.writes.size()) {
    v.push_back("write items: " + std::to_string(calls.size()) +
                ", write calls logged: " + std::to_string(t.writes.size()));
  }
  for (std::size_t i = 0; i < std::min(calls.size(), t.writes.size()); ++i) {
    const json& w = calls[i];
    if (i64(w["offset"]) != t.writes[i].offset || i64(w["ret"]) != t.writes[i].ret) {
      v.push_back("write " + std::to_string(i) + ": logged off " +
                  std::to_string(t.writes[i].offset) + " ret " + std::to_string(t.writes[i].ret) +
                  ", traced " + brief(w));
    }
  }
  if (f.syncs.size() != t.syncs.size()) {
    v.push_back("sync items: " + std::to_string(f.syncs.size()) +
                ", sync calls logged: " + std::to_string(t.syncs.size()));
  }
  for (std::size_t i = 0; i < std::min(f.syncs.size(), t.syncs.size()); ++i) {
    if (f.syncs[i]["syscall"] != t.syncs[i].kind || i64(f.syncs[i]["ret"]) != t.syncs[i].ret) {
      v.push_back("sync " + std::to_string(i) + ": logged " + t.syncs[i].kind + " ret " +
                  std::to_string(t.syncs[i].ret) + ", traced " + f.syncs[i].value("syscall", "?"));
    }
  }
  return v;
}

// A write's pages are the pages its bytes span; it dirtied no more than those; an O_DIRECT
// write that went direct dirtied none.
inline std::vector<std::string> check_pages(const FileItems& f) {
  std::vector<std::string> v;
  for (const json& w : f.writes) {
    if (w["syscall"] == "mmap" || i64(w["ret"]) <= 0) continue;
    const std::int64_t off = i64(w["offset"]);
    const std::int64_t spanned = (off + i64(w["ret"]) - 1) / 4096 - off / 4096 + 1;
    if (!w["direct"].get<bool>() && i64(w["pages"]) != spanned) {
      v.push_back("pages " + std::to_string(i64(w["pages"])) + ", its bytes span " +
                  std::to_string(spanned) + ": " + brief(w));
    }
    if (i64(w["pages_dirtied"]) > spanned) {
      v.push_back("pages_dirtied " + std::to_string(i64(w["pages_dirtied"])) + " beyond the " +
                  std::to_string(spanned) + " its bytes span: " + brief(w));
    }
  }
  return v;
}

// Written and durable times agree with the requests listed, and a written write lists some.
inline std::vector<std::string> check_times(const FileItems& f) {
  std::vector<std::string> v;
  for (const json& w : f.writes) {
    const std::string state = w["state"];
    if (state != "written" && state != "durable") continue;
    if (w["requests"].empty()) v.push_back("written without a request: " + brief(w));
    if (w["written_ns"].is_null()) v.push_back("written with no written_ns: " + brief(w));
    if (state == "durable" && i64(w["durable_ns"]) < i64(w["written_ns"])) {
      v.push_back("durable before written: " + brief(w));
    }
    if (w["direct"].get<bool>() && w["syscall"] != "io_submit" && !w.value("incomplete", false) &&
        i64(w["written_ns"]) > i64(w["end_ns"])) {
      v.push_back("O_DIRECT write written after its call returned: " + brief(w));
    }
  }
  return v;
}

// sync_file_range(2) promises durability never; with SYNC_FILE_RANGE_WAIT_BEFORE, _WRITE and
// _WAIT_AFTER together (its man page: the only combination that writes out every dirty page of
// the range, one under writeback at the call included) the range's pages are written by its
// return. With fewer flags it promises nothing (PostgreSQL's writeback hints: _WRITE alone).
inline bool writes_out_range(const json& sync) {
  return has_flag(sync, "SYNC_FILE_RANGE_WAIT_BEFORE") && has_flag(sync, "SYNC_FILE_RANGE_WRITE") &&
         has_flag(sync, "SYNC_FILE_RANGE_WAIT_AFTER");
}
inline bool in_range(const json& sync, const json& write) {
  if (!sync.contains("range") || !sync["range"].is_object()) return true;
  const std::int64_t from = i64(sync["range"]["offset"]);
  const std::int64_t bytes = i64(sync["range"]["bytes"]);
  const std::int64_t off = i64(write["offset"]);
  return off + i64(write["ret"]) > from && (bytes == 0 || off < from + bytes);
}

// The sync contract: when a sync returned 0, every write the file received before the call
// began is durable by the call's end (or its pages were discarded), and every request and
// flush the sync lists completed inside it; a sync_file_range that writes out its range (above)
// leaves the writes in it written by its end. An O_SYNC/O_DSYNC write is durable when it
// returns.
inline std::vector<std::string> check_sync_contract(const FileItems& f) {
  std::vector<std::string> v;
  std::size_t reported = 0;
  auto add = [&](const std::string& s) {
    if (++reported <= 20) v.push_back(s);
  };
  for (const json& s : f.syncs) {
    if (i64(s["ret"]) != 0) continue;
    const std::int64_t start = i64(s["start_ns"]);
    const std::int64_t end = i64(s["end_ns"]);
    const bool range_sync = s.value("syscall", "") == "sync_file_range";
    if (range_sync && !writes_out_range(s)) continue;
    for (const json& w : f.writes) {
      if (i64(w["end_ns"]) >= start || i64(w["ret"]) <= 0) continue;
      const std::string state = w["state"];
      if (state == "discarded") continue;
      if (range_sync) {
        if (!in_range(s, w) || w["syscall"] == "mmap") continue;
        if (state != "written" && state != "durable") {
          add("sync_file_range id " + std::to_string(s.value("id", 0)) +
              " wrote out its range but " + brief(w));
        } else if (i64(w["written_ns"]) > end) {
          add("written " + std::to_string(i64(w["written_ns"]) - end) +
              " ns after the sync_file_range that wrote it out returned: " + brief(w));
        }
        continue;
      }
      if (state != "durable") {
        add(s.value("syscall", "?") + " id " + std::to_string(s.value("id", 0)) +
            " returned 0 but " + brief(w));
      } else if (i64(w["durable_ns"]) > end && !w.value("incomplete", false)) {
        // (An incomplete write's durable time is an upper bound: check_incomplete.)
        add("durable " + std::to_string(i64(w["durable_ns"]) - end) + " ns after the " +
            s.value("syscall", "?") + " that covered it returned: " + brief(w));
      }
    }
    for (const char* list : {"requests", "flushes", "journal_requests"}) {
      if (!s.contains(list)) continue;
      for (const json& r : s[list]) {
        if (r.value("complete_inferred", false)) continue;  // an upper bound: check_incomplete
        if (r["complete_ns"].is_null() || i64(r["complete_ns"]) > end) {
          add(std::string(list) + " of " + s.value("syscall", "?") + " id " +
              std::to_string(s.value("id", 0)) + " not complete by its end (sector " +
              (r["sector"].is_null() ? std::string("-") : std::to_string(i64(r["sector"]))) + ")");
        }
      }
    }
  }
  for (const json& w : f.writes) {
    if (!w["sync"].get<bool>() || i64(w["ret"]) <= 0) continue;
    if (w["state"] != "durable" || i64(w["durable_ns"]) > i64(w["end_ns"])) {
      add("O_SYNC write not durable when it returned: " + brief(w));
    }
  }
  if (reported > 20) v.push_back("... " + std::to_string(reported - 20) + " more");
  return v;
}

// The page cache as the workload ended (cachestat of each page between T0 and T1): the last
// write covering a page the kernel holds clean reached the device by T1; the last write
// covering a page still dirty or under writeback at T0 did not reach it before T0.
inline std::vector<std::string> check_page_cache(const Truth& t, const FileItems& f) {
  std::vector<std::string> v;
  if (!t.pages_window || t.pages.empty()) return v;
  const auto [t0, t1] = *t.pages_window;
  // A mapping item's pages are the ones it dirtied, which its span does not say (holes, pages
  // of an earlier item stored into again): its pending pages are distinct from every other
  // item's, and no more can be pending at the trace's end than the kernel held at T0.
  std::uint64_t kernel_pending = 0, traced_pending = 0;
  for (const PageState& p : t.pages) kernel_pending += (p.dirty || p.writeback) ? 1 : 0;
  for (const json& w : f.writes)
    if (w["syscall"] == "mmap" && w["state"] == "dirty") traced_pending += i64(w["pages_pending"]);
  if (traced_pending > kernel_pending) {
    v.push_back(std::to_string(traced_pending) + " pages of mapping items pending, the kernel " +
                "held " + std::to_string(kernel_pending) + " dirty or under writeback");
  }
  // The last traced buffered write over each page.
  std::map<std::uint64_t, const json*> last;
  for (const json& w : f.writes) {
    if (i64(w["ret"]) <= 0 || w["direct"].get<bool>() || i64(w["end_ns"]) > t0) continue;
    if (w["syscall"] == "mmap") continue;
    const std::uint64_t first = static_cast<std::uint64_t>(i64(w["offset"])) / 4096;
    const std::uint64_t n = static_cast<std::uint64_t>(i64(w["pages"]));
    for (std::uint64_t p = first; p < first + n; ++p) {
      auto& slot = last[p];
      if (slot == nullptr || i64((*slot)["start_ns"]) <= i64(w["start_ns"])) slot = &w;
    }
  }
  std::size_t reported = 0;
  for (const auto& [page, w] : last) {
    if (page >= t.pages.size()) continue;
    const PageState& k = t.pages[page];
    const std::string state = (*w)["state"];
    const bool kernel_pending = k.dirty || k.writeback;
    if (!kernel_pending && state == "dirty") {
      if (++reported <= 20)
        v.push_back("page " + std::to_string(page) + " clean in the page cache, its last write " +
                    brief(*w));
    } else if (!kernel_pending && (state == "written" || state == "durable") &&
               i64((*w)["written_ns"]) > t1 && !(*w).value("incomplete", false)) {
      if (++reported <= 20)
        v.push_back("page " + std::to_string(page) + " clean at T1, written later: " + brief(*w));
    } else if (kernel_pending && (state == "written" || state == "durable") &&
               i64((*w)["written_ns"]) < t0) {
      if (++reported <= 20)
        v.push_back("page " + std::to_string(page) + " still " +
                    (k.dirty ? "dirty" : "under writeback") +
                    " at T0, yet written before: " + brief(*w));
    }
  }
  if (reported > 20) v.push_back("... " + std::to_string(reported - 20) + " more");
  return v;
}

// Incomplete items: the tracer says it cannot vouch for their times, and must say why. Each is
// explained by records lost to a full ring buffer or by request completions the kernel did not
// deliver (summary "missed_completions"); one missed completion touches the writes of one
// request, at most `per_missed` of them.
inline std::vector<std::string> check_incomplete(const std::vector<json>& items,
                                                 const json& summary,
                                                 std::uint64_t per_missed = 1024) {
  std::uint64_t incomplete = 0;
  for (const json& o : items)
    if (o.value("type", "") != "summary" && o.value("incomplete", false)) ++incomplete;
  const std::uint64_t lost = summary.value("lost", 0ull);
  const std::uint64_t missed = summary.value("missed_completions", 0ull);
  if (incomplete != summary.value("incomplete", 0ull))
    return {"incomplete items " + std::to_string(incomplete) + ", the summary counts " +
            std::to_string(summary.value("incomplete", 0ull))};
  if (incomplete == 0 || lost > 0) return {};
  if (missed == 0)
    return {std::to_string(incomplete) + " incomplete items, nothing lost or missed"};
  if (incomplete > missed * per_missed)
    return {std::to_string(incomplete) + " incomplete items for " + std::to_string(missed) +
            " missed completions"};
  return {};
}

// The summary's totals for the disk against diskstats: at least what the disk completed while
// the workload ran (`inner`, read by it, inside the trace), at most what it completed from
// before the tracer attached to after it detached (`outer`). Every request counts, whether an
// item claimed it or not.
inline std::vector<std::string> check_disk_totals(const json& summary, const std::string& disk,
                                                  const std::optional<DiskCounters>& inner,
                                                  const DiskCounters& outer) {
  std::vector<std::string> v;
  if (!summary.contains("disks")) return {"the summary has no disks"};
  const json totals = summary["disks"].value(disk, json::object());
  const std::uint64_t writes = totals.value("write_requests", 0ull);
  const std::uint64_t bytes = totals.value("write_bytes", 0ull);
  const std::uint64_t flushes = totals.value("flush_requests", 0ull);
  auto within = [&](const char* what, std::uint64_t traced, std::uint64_t lo, std::uint64_t hi) {
    if (traced < lo || traced > hi)
      v.push_back(std::string(what) + ": traced " + std::to_string(traced) + ", diskstats " +
                  std::to_string(lo) + (lo == hi ? "" : ".." + std::to_string(hi)));
  };
  const DiskCounters none{};
  const DiskCounters& in = inner ? *inner : none;
  within("write requests", writes, in.writes, outer.writes);
  within("bytes written", bytes, in.write_sectors * 512, outer.write_sectors * 512);
  within("flush requests", flushes, in.flushes, outer.flushes);
  return v;
}

}  // namespace wp::testing::oracle
