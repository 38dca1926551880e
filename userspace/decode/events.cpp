// SPDX-License-Identifier: Apache-2.0
#include "decode/events.h"

#include <cstring>

namespace wp {

const char* name_change_op_name(NameChangeOp op) {
  switch (op) {
    case NameChangeOp::Rename: return "rename";
    case NameChangeOp::Link: return "link";
    case NameChangeOp::Unlink: return "unlink";
    case NameChangeOp::Rmdir: return "rmdir";
    case NameChangeOp::Mkdir: return "mkdir";
    case NameChangeOp::Open: return "open";
    case NameChangeOp::Truncate: return "truncate";
    case NameChangeOp::Fallocate: return "fallocate";
    case NameChangeOp::Close: return "close";
    case NameChangeOp::Send: return "send";
  }
  return "?";
}

std::vector<const char*> name_change_flag_names(std::uint32_t flags) {
  static constexpr std::pair<std::uint32_t, const char*> kNames[] = {
      {WP_NS_CREATE, "create"},         {WP_NS_EXCL, "excl"},
      {WP_NS_TRUNC, "trunc"},           {WP_NS_NOREPLACE, "noreplace"},
      {WP_NS_EXCHANGE, "exchange"},     {WP_NS_WHITEOUT, "whiteout"},
      {WP_NS_DIR, "directory"},         {WP_NS_NAME1_CUT, "name_cut"},
      {WP_NS_NAME2_CUT, "new_name_cut"}};
  std::vector<const char*> out;
  for (const auto& [bit, name] : kNames)
    if (flags & bit) out.push_back(name);
  return out;
}

const char* inline_fs_name(InlineFs fs) {
  switch (fs) {
    case InlineFs::Btrfs: return "btrfs";
    case InlineFs::Ext4: return "ext4";
  }
  return "?";
}

const char* submit_why_name(SubmitWhy why) {
  switch (why) {
    case SubmitWhy::Unknown: return "unknown";
    case SubmitWhy::WriteSyscall: return "write";
    case SubmitWhy::SyncSyscall: return "fsync";
    case SubmitWhy::Background: return "background";
    case SubmitWhy::Periodic: return "periodic";
    case SubmitWhy::Sync: return "sync";
    case SubmitWhy::Vmscan: return "vmscan";
    case SubmitWhy::OtherWriteback: return "writeback";
    case SubmitWhy::ReadCall: return "read";
    case SubmitWhy::Fault: return "fault";
  }
  return "unknown";
}

std::vector<const char*> call_flag_names(std::uint32_t flags) {
  static constexpr std::pair<std::uint32_t, const char*> kNames[] = {
      {call_flag::kRwfHipri, "RWF_HIPRI"},
      {call_flag::kRwfDsync, "RWF_DSYNC"},
      {call_flag::kRwfSync, "RWF_SYNC"},
      {call_flag::kRwfNowait, "RWF_NOWAIT"},
      {call_flag::kRwfAppend, "RWF_APPEND"},
      {call_flag::kRwfNoappend, "RWF_NOAPPEND"},
      {call_flag::kRwfAtomic, "RWF_ATOMIC"},
      {call_flag::kRwfDontcache, "RWF_DONTCACHE"},
      {call_flag::kMsAsync, "MS_ASYNC"},
      {call_flag::kMsInvalidate, "MS_INVALIDATE"},
      {call_flag::kMsSync, "MS_SYNC"},
      {call_flag::kAioVectored, "aio_vectored"},
      {call_flag::kAioPastBound, "aio_past_bound"},
      {call_flag::kSfrWaitBefore, "SYNC_FILE_RANGE_WAIT_BEFORE"},
      {call_flag::kSfrWrite, "SYNC_FILE_RANGE_WRITE"},
      {call_flag::kSfrWaitAfter, "SYNC_FILE_RANGE_WAIT_AFTER"},
      {call_flag::kCopyUp, "COPY_UP"},
  };
  std::vector<const char*> names;
  for (const auto& [bit, name] : kNames) {
    if (flags & bit) names.push_back(name);
  }
  return names;
}

std::string dev_string(DevT dev) {
  return std::to_string(dev_major(dev)) + ":" + std::to_string(dev_minor(dev));
}

// Mirrors the kernel's blk_fill_rwbs() (kernel/trace/blktrace.c). It looks only at the op and
// its flags; `bytes` is part of the signature for callers that have it (very old kernels printed
// 'N' for zero-length requests) but the modern output does not depend on it.
std::string rwbs(ReqOp op, std::uint32_t flags, std::uint32_t /*bytes*/) {
  std::string out;
  if (flags & req_flag::kPreflush) out += 'F';
  switch (op) {
    case ReqOp::Write: out += 'W'; break;
    case ReqOp::Discard: out += 'D'; break;
    case ReqOp::Flush: out += 'F'; break;
    case ReqOp::Read: out += 'R'; break;
    default: out += 'N'; break;  // includes WriteZeroes: mainline has no letter for it
  }
  if (flags & req_flag::kFua) out += 'F';
  if (flags & req_flag::kSync) out += 'S';
  if (flags & req_flag::kMeta) out += 'M';
  return out;
}

FilteredIo filtered_io_entry(const wp_filtered_io_key& key, const wp_filtered_io& io) {
  return {.disk = key.disk,
          .tgid = key.tgid,
          .cgroup_id = key.cgroup_id,
          .dev = key.dev,
          .ino = key.ino,
          .comm = std::string(io.comm, strnlen(io.comm, sizeof(io.comm))),
          .bytes = io.bytes,
          .bios = io.bios};
}

}  // namespace wp
