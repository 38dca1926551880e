#include "decode/events.h"

namespace wp {

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
  }
  return "unknown";
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

}  // namespace wp
